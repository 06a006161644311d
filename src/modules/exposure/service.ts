/**
 * An agent's exposure per market, as the concentration check counts it (docs/api.md#risk-checks): per
 * condition, the positions at cost (from the fills, average cost) plus the orders' part beside them:
 * open, reserved or unresolved buys' unfilled notional, and what ended buys are known to have filled
 * beyond their fills. The same rules the agent's actor is loaded with (agent-store.ts ORDER_EXPOSURE,
 * actors/order-counts.ts exposureOf).
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/database.ts";
import type { FillStore } from "../../db/fill-store.ts";
import { orders } from "../../db/schema.ts";
import { positionsFrom } from "../../domain/positions.ts";
import type { Caller } from "../../http/caller.ts";
import { toUnits, unitsToNumber } from "../../domain/units.ts";
import { ORDER_EXPOSURE } from "../agents/agent-store.ts";
import type { AgentService } from "../agents/service.ts";
import type { ExposureModel } from "./model.ts";

export class ExposureService {
  constructor(
    private readonly db: Db,
    private readonly agents: AgentService,
    private readonly fills: Pick<FillStore, "countedFillsOfAgent">,
  ) {}

  async get(caller: Caller, agentId: string): Promise<ExposureModel> {
    const view = (await this.agents.actorFor(caller, agentId)).view();
    const [rows, fillRows] = await Promise.all([
      this.db
        .select({
          condition: orders.conditionId,
          markets: sql<string[]>`array_agg(distinct ${orders.marketId})`,
          units: sql<string>`coalesce(sum(${ORDER_EXPOSURE}), 0)`,
        })
        .from(orders)
        .where(eq(orders.agentId, agentId))
        .groupBy(orders.conditionId),
      this.fills.countedFillsOfAgent(agentId),
    ]);
    const byCondition = new Map<string, { markets: Set<string>; ordersUnits: bigint; positionsUnits: bigint }>();
    const entry = (c: string) => {
      let e = byCondition.get(c);
      if (!e) byCondition.set(c, (e = { markets: new Set(), ordersUnits: 0n, positionsUnits: 0n }));
      return e;
    };
    for (const r of rows) {
      const e = entry(r.condition);
      for (const m of parseArray(r.markets)) e.markets.add(m);
      e.ordersUnits += BigInt(r.units);
    }
    const conditionOf = new Map(fillRows.map((f) => [f.tokenId, f.conditionId]));
    for (const p of positionsFrom(fillRows)) {
      const e = entry(conditionOf.get(p.tokenId) ?? "");
      e.markets.add(p.tokenId);
      e.positionsUnits += p.costUnits;
    }
    const limits = view.limits;
    // Exact: percent and capital are decimals of at most 6 places; the product is scaled back once.
    const limitUnits = (toUnits(limits.max_market_exposure_pct, 6, "floor") * toUnits(limits.capital_usdc, 6, "floor")) / 1_000_000n;
    return {
      agent_id: agentId,
      limit_usdc: unitsToNumber(limitUnits),
      data: [...byCondition.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([condition, e]) => ({
          condition_id: condition,
          market_ids: [...e.markets].sort(),
          exposure_usdc: unitsToNumber(e.ordersUnits + e.positionsUnits),
          positions_cost_usdc: unitsToNumber(e.positionsUnits),
          open_orders_usdc: unitsToNumber(e.ordersUnits),
        }))
        .filter((r) => r.exposure_usdc !== 0),
    };
  }
}

/** postgres-js and PGlite give a text[] as an array; a driver that does not parse it gives `{a,b}`. */
function parseArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  return value.replace(/^\{|\}$/g, "").split(",").filter(Boolean);
}
