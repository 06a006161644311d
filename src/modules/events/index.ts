import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { EventsQuery, eventsDetail } from "./model.ts";
import type { EventStreamService } from "./service.ts";

export function eventsModule(deps: { events: EventStreamService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "events", prefix: "/v1/events" }).use(deps.auth).get(
    "",
    ({ caller, query, request }) => deps.events.open(caller, query, request.headers.get("last-event-id"), request.signal),
    {
      auth: true,
      query: EventsQuery,
      detail: eventsDetail,
    },
  );
}
