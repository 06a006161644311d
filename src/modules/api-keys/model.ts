import { t } from "elysia";
import { ForbiddenError, NotFoundError } from "../../errors/errors.ts";
import { jsonResponse, problemResponses } from "../../errors/problem-model.ts";
import { idPattern } from "../../domain/ids.ts";

export const IssueKeyBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    agent_id: t.Optional(t.String({ pattern: idPattern("agt"), description: "scope the key to this agent: it then acts on that agent only" })),
  },
  { additionalProperties: false, examples: [{ name: "agent key", agent_id: "agt_20ew38ygo3k92ke1kcen" }] },
);

export const IssuedKey = t.Object({
  id: t.String(),
  key: t.String({ description: "shown once; only its hash is stored" }),
  name: t.Union([t.String(), t.Null()]),
  agent_id: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
}, { examples: [{"id": "key_20ew38z79q80dqnvpmc0", "key": "bk_9pX2mQ7rT4vW1yZ3bC5dE8fG0hJ6kL2nP4sU7wA9cE1", "name": "agent key", "agent_id": "agt_20ew38ygo3k92ke1kcen", "created_at": "2026-11-24T03:13:45.704Z"}] });

export const KeyIdParam = t.Object({ id: t.String({ pattern: idPattern("key"), description: "API key id", examples: ["key_20ew38z79q80dqnvpmc0"] }) });

const KeyListItem = t.Object({ id: t.String(), name: t.Union([t.String(), t.Null()]), agent_id: t.Union([t.String(), t.Null()]), hint: t.String({ description: "the key's last 4 characters" }), created_at: t.String(), last_used_at: t.Union([t.String(), t.Null()], { description: "when the key last authenticated a request (recorded at most once a minute), or null" }) });
const KeyPage = t.Object({ data: t.Array(KeyListItem), next_cursor: t.Union([t.String(), t.Null()]) });
const agentScoped = (what: string) => new ForbiddenError(`an agent-scoped key cannot ${what} keys`);

/** OpenAPI details of the API key routes (docs/api.md#api-keys). */
export const apiKeysDetail = {
  issue: { summary: "Issue an API key", description: "The key is shown only in this answer.", tags: ["api-keys"], responses: problemResponses(agentScoped("issue"), new NotFoundError("agent")) },
  list: {
    summary: "List API keys (no secrets)",
    tags: ["api-keys"],
    responses: { "200": jsonResponse("A page of keys, newest first", KeyPage, {"data": [{"id": "key_20ew38z79q80dqnvpmc0", "name": "agent key", "agent_id": "agt_20ew38ygo3k92ke1kcen", "hint": "0s7k", "created_at": "2026-11-24T03:13:45.704Z", "last_used_at": null}, {"id": "key_20ew38y26m8b0hiktwtr", "name": "initial", "agent_id": null, "hint": "C_us", "created_at": "2026-11-24T03:13:45.236Z", "last_used_at": "2026-11-24T03:13:45.000Z"}], "next_cursor": null}), ...problemResponses(agentScoped("list")) },
  },
  revoke: {
    summary: "Revoke an API key",
    description: "Takes effect at once; answers 204 with no body.",
    tags: ["api-keys"],
    responses: { "204": { description: "Revoked" }, ...problemResponses(agentScoped("revoke"), new NotFoundError("API key")) },
  },
};
