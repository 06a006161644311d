import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { requestMeta } from "../../http/request-meta.ts";
import { CreateOrgBody, CreatedOrg, createOrgDetail } from "./model.ts";
import type { OrgService } from "./service.ts";

export function orgsModule(deps: { orgs: OrgService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "orgs", prefix: "/v1/orgs" }).use(deps.auth).post(
    "",
    async ({ body, set, request }) => {
      set.status = 201;
      return deps.orgs.create(body.name, requestMeta(request)?.reservedId);
    },
    {
      admin: true,
      body: CreateOrgBody,
      response: { 201: CreatedOrg },
      detail: createOrgDetail,
    },
  );
}
