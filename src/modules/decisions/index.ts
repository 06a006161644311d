import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { DecisionPage, decisionsDetail, ListDecisionsQuery, SummaryModel, SummaryQuery } from "./model.ts";
import type { DecisionService } from "./service.ts";

export function decisionsModule(deps: { decisions: DecisionService; auth: ReturnType<typeof authPlugin> }) {
  const { decisions } = deps;
  return new Elysia({ name: "decisions", prefix: "/v1/risk" })
    .use(deps.auth)
    .get("/decisions", ({ caller, query }) => decisions.list(caller, query), {
      auth: true,
      query: ListDecisionsQuery,
      response: { 200: DecisionPage },
      detail: decisionsDetail.list,
    })
    .get("/summary", ({ caller, query }) => decisions.summary(caller, query), {
      auth: true,
      query: SummaryQuery,
      response: { 200: SummaryModel },
      detail: decisionsDetail.summary,
    });
}
