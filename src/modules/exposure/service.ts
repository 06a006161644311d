/**
 * An agent's exposure per market, as the concentration check counts it (docs/api.md#risk-checks, check 5): per
 * condition, buys that are reserved, open or filled, net of filled sells. Read from the stored
 * orders with the same rule the agent's actor is loaded with (agent-store.ts).
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/database.ts";
import { orders } from "../../db/schema.ts";
import type { Caller } from "../../http/caller.ts";
import { toUnits, unitsToNumber } from "../../domain/units.ts";
import { COUNTED } from "../agents/agent-store.ts";
import type { AgentService } from "../agents/service.ts";
import type { ExposureModel } from "./model.ts";

export class ExposureService {
  constructor(
    private readonly db: Db,
    private readonly agents: AgentService,
  ) {}

  async get(caller: Caller, agentId: string): Promise<ExposureModel> {
    const view = (await this.agents.actorFor(caller, agentId)).view();
    const rows = await this.db
      .select({
        condition: orders.conditionId,
        markets: sql<string[]>`array_agg(distinct ${orders.marketId})`,
        units: sql<string>`coalesce(sum(case when ${orders.side} = 'buy' then ${COUNTED} else -${orders.filledUnits} end), 0)`,
      })
      .from(orders)
      .where(eq(orders.agentId, agentId))
      .groupBy(orders.conditionId)
      .orderBy(orders.conditionId);
    const limits = view.limits;
    // Exact: percent and capital are decimals of at most 6 places; the product is scaled back once.
    const limitUnits = (toUnits(limits.max_market_exposure_pct, 6, "floor") * toUnits(limits.capital_usdc, 6, "floor")) / 1_000_000n;
    return {
      agent_id: agentId,
      limit_usdc: unitsToNumber(limitUnits),
      data: rows
        .map((r) => ({ condition_id: r.condition, market_ids: parseArray(r.markets), exposure_usdc: unitsToNumber(BigInt(r.units)) }))
        .filter((r) => r.exposure_usdc !== 0),
    };
  }
}

/** postgres-js and PGlite give a text[] as an array; a driver that does not parse it gives `{a,b}`. */
function parseArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  return value.replace(/^\{|\}$/g, "").split(",").filter(Boolean);
}
