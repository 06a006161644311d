import { t } from "elysia";
import { idPattern } from "../../domain/ids.ts";

export const EventsQuery = t.Object(
  {
    agent_id: t.Optional(t.String({ pattern: idPattern("agt") })),
    after: t.Optional(t.String({ pattern: "^[0-9]{1,15}$", description: "replay events after this id (the Last-Event-ID header wins)" })),
  },
  { additionalProperties: false },
);
export type EventsQuery = typeof EventsQuery.static;
