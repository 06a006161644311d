/**
 * An agent's positions per outcome token (docs/api.md#get-v1agentsidpositions), from its fills (the
 * sources of the venue's truth report them; src/db/fill-store.ts), marked at the book's mid.
 */
import type { FillStore } from "../../db/fill-store.ts";
import { averagePriceUnits, markUnits, positionsFrom, unrealizedUnits } from "../../domain/positions.ts";
import { fromUnits, toUnits } from "../../domain/units.ts";
import type { Caller } from "../../http/caller.ts";
import type { Venue } from "../../venues/venue.ts";
import type { AgentService } from "../agents/service.ts";
import type { PositionsModel } from "./model.ts";

export class PositionService {
  constructor(private readonly deps: { fills: Pick<FillStore, "countedFillsOfAgent">; agents: Pick<AgentService, "actorFor">; venue: Pick<Venue, "getBook">; timeoutMs: number }) {}

  async get(caller: Caller, agentId: string): Promise<PositionsModel> {
    await this.deps.agents.actorFor(caller, agentId);
    const rows = await this.deps.fills.countedFillsOfAgent(agentId);
    const conditions = new Map(rows.map((r) => [r.tokenId, r.conditionId]));
    const positions = positionsFrom(rows).filter((p) => p.sharesUnits !== 0n || p.realizedUnits !== 0n);
    const marks = await Promise.all(positions.map((p) => (p.sharesUnits > 0n ? this.mark(p.tokenId) : Promise.resolve(null))));
    return {
      agent_id: agentId,
      positions: positions.map((p, i) => {
        const mark = marks[i];
        return {
          token_id: p.tokenId,
          market_id: p.tokenId,
          condition_id: conditions.get(p.tokenId) ?? "",
          shares: fromUnits(p.sharesUnits),
          avg_price: fromUnits(averagePriceUnits(p)),
          cost_usdc: fromUnits(p.costUnits),
          realized_pnl_usdc: fromUnits(p.realizedUnits),
          mark_price: mark === null ? null : fromUnits(mark),
          unrealized_pnl_usdc: mark === null ? (p.sharesUnits === 0n ? "0" : null) : fromUnits(unrealizedUnits(p, mark)),
        };
      }),
    };
  }

  /** The book's mid (6-decimal price units); null when the venue has no book or does not answer. */
  private async mark(tokenId: string): Promise<bigint | null> {
    try {
      const book = await this.deps.venue.getBook(tokenId, { signal: AbortSignal.timeout(this.deps.timeoutMs) });
      if (!book) return null;
      const bid = book.bids[0] ? toUnits(book.bids[0].price, 6, "floor") : null;
      const ask = book.asks[0] ? toUnits(book.asks[0].price, 6, "floor") : null;
      return markUnits(bid, ask);
    } catch {
      return null;
    }
  }
}
