import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { AgentIdParam } from "../agents/model.ts";
import { ExposureModel, exposureDetail } from "./model.ts";
import type { ExposureService } from "./service.ts";

export function exposureModule(deps: { exposure: ExposureService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "exposure", prefix: "/v1/agents" }).use(deps.auth).get("/:id/exposure", ({ caller, params }) => deps.exposure.get(caller, params.id), {
    auth: true,
    params: AgentIdParam,
    response: { 200: ExposureModel },
    detail: exposureDetail,
  });
}
