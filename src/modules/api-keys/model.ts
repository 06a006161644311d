import { t } from "elysia";
import { idPattern } from "../../domain/ids.ts";

export const IssueKeyBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    agent_id: t.Optional(t.String({ pattern: idPattern("agt") })),
  },
  { additionalProperties: false },
);

export const IssuedKey = t.Object({
  id: t.String(),
  key: t.String({ description: "shown once; only its hash is stored" }),
  name: t.Union([t.String(), t.Null()]),
  agent_id: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
});

export const KeyIdParam = t.Object({ id: t.String({ pattern: idPattern("key") }) });
