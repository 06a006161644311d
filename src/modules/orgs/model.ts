import { t } from "elysia";
import { InvalidRequestError, NotFoundError, UnauthenticatedError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";

export const CreateOrgBody = t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false, examples: [{ name: "Acme" }] });

export const CreatedOrg = t.Object(
  {
    org: t.Object({ id: t.String(), name: t.String(), created_at: t.String() }),
    api_key: t.Object({ id: t.String(), key: t.String({ description: "shown once; only its SHA-256 is stored" }), created_at: t.String() }),
  },
  { examples: [{"org": {"id": "org_20ew38y1x4wvanve4gs1", "name": "Acme", "created_at": "2026-11-24T03:13:45.233Z"}, "api_key": {"id": "key_20ew38y26m8b0hiktwtr", "key": "bk_3q2ZkU0n1yT8c5VbA7eJm4rG9pLwXh6sDf2Ko1Ni0Qe", "created_at": "2026-11-24T03:13:45.236Z"}}] },
);
export type CreatedOrg = typeof CreatedOrg.static;

/** OpenAPI detail of POST /v1/orgs (docs/api.md#post-v1orgs). */
export const createOrgDetail = {
  summary: "Register an organization (admin token)",
  description: "Needs `Authorization: Bearer <ADMIN_TOKEN>`; without ADMIN_TOKEN configured the route answers 404. The API key is shown only in this answer.",
  tags: ["orgs"],
  security: [{ adminToken: [] }],
  responses: problemResponses(new InvalidRequestError("/name: Expected string length greater or equal to 1", [{ path: "/name", message: "Expected string length greater or equal to 1" }]), new UnauthenticatedError("a valid admin bearer token is required"), new NotFoundError("route")),
};
