import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { AgentIdParam } from "../agents/model.ts";
import { PositionsModel, positionsDetail } from "./model.ts";
import type { PositionService } from "./service.ts";

export function positionsModule(deps: { positions: PositionService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "positions", prefix: "/v1/agents" }).use(deps.auth).get("/:id/positions", ({ caller, params }) => deps.positions.get(caller, params.id), {
    auth: true,
    params: AgentIdParam,
    response: { 200: PositionsModel },
    detail: positionsDetail,
  });
}
