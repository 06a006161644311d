import { t } from "elysia";

export const CreateOrgBody = t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const CreatedOrg = t.Object({
  org: t.Object({ id: t.String(), name: t.String(), created_at: t.String() }),
  api_key: t.Object({ id: t.String(), key: t.String(), created_at: t.String() }),
});
export type CreatedOrg = typeof CreatedOrg.static;
