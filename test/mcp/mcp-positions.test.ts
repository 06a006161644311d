/**
 * The MCP server's get_positions tool end to end (issue #22, item 6): agent X trades through the MCP
 * server (the reference 2.x client over stdio, `bun run mcp`) on the paper venue, the service's
 * default: its resting buy is filled by agent Y's sells in the same process (the paper venue reports
 * both sides in-process), and it buys from the book as well. get_positions answers the exact shares,
 * average price and cost that GET /v1/agents/{id}/positions computes from the fills. PGlite and, with
 * TEST_DATABASE_URL, PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { describeEachDatabase } from "../support/databases.ts";
import { approved, DEM_YES, holdShares, newTrader, sign, submitSigned } from "../support/payload.ts";
import { type LiveService, serveTestApp } from "../sdk/serve.ts";
import { ROOT, setupAgent } from "./support.ts";


describeEachDatabase("MCP get_positions after trades on the paper venue", (_kind, database) => {
  let live: LiveService;
  beforeAll(async () => {
    live = await serveTestApp(await database());
  });
  afterAll(async () => {
    await live?.t.app.stop();
    await live?.stop();
  });

  test("X's resting buy filled by Y's sells, then a buy from the book: shares, average price and cost, exact", async () => {
    const { client: sdk, agent: x, env } = await setupAgent(live.url);
    const mcp = new Client({ name: "positions-test", version: "1.0.0" });
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: ["run", "mcp"], env, cwd: ROOT, stderr: "pipe" } as any));
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const r: any = await mcp.callTool({ name, arguments: args });
      if (r.isError) throw new Error(`${name}: ${(r.content as any[]).map((c) => c.text).join("\n")}`);
      return r.structuredContent as any;
    };
    const settled = () => live.t.app.services.venueReports.settled();
    try {
      // Nothing held yet.
      expect((await call("get_positions")).positions).toEqual([]);

      // X bids 0.49 for 10 shares (4.9 USDC) through the MCP tools: it rests (the book: bids 0.48, asks 0.50).
      const placed = await call("place_intent", { market_id: DEM_YES, side: "buy", size_usdc: 4.9, price: 0.49 });
      expect(placed.status).toBe("awaiting_signature");
      expect((await call("sign_and_submit", { order_id: placed.order_id })).status).toBe("open");

      // Y (another organization) holds 12 shares and sells 4 of them into X's bid: X's order partly filled.
      const y = await newTrader(live.t);
      await holdShares(live.t, y);
      const sell = async (size_usdc: number) => {
        const ask = await approved(live.t, y, { side: "sell", size_usdc, price: 0.49 });
        const res = await submitSigned(live.t, y.key, ask.order_id, await sign(y.account, ask.unsigned_order));
        expect(res.body.status).toBe("filled");
        await settled();
      };
      await sell(2.45); // 5 shares
      let pos = (await call("get_positions")).positions;
      expect(pos).toHaveLength(1);
      expect(pos[0]).toMatchObject({ token_id: DEM_YES, shares: "5", avg_price: "0.49", cost_usdc: "2.45", realized_pnl_usdc: "0" });
      expect((await call("get_order", { order_id: placed.order_id })).order).toMatchObject({ status: "open", filled_shares: 5 });

      // Y sells the other 5: X's order is filled, 10 shares at 0.49.
      await sell(2.45);
      pos = (await call("get_positions")).positions;
      expect(pos[0]).toMatchObject({ shares: "10", avg_price: "0.49", cost_usdc: "4.9", realized_pnl_usdc: "0" });
      expect((await call("get_order", { order_id: placed.order_id })).order.status).toBe("filled");

      // X buys 5 more from the book at its best ask, 0.50 (2.5 USDC), matched at placement: 15 shares,
      // cost 7.4, average 7.4 / 15 = 0.493333 (floored to 6 places).
      const more = await call("place_intent", { market_id: DEM_YES, side: "buy", size_usdc: 2.5, price: 0.5 });
      expect((await call("sign_and_submit", { order_id: more.order_id })).status).toBe("filled");
      await settled();
      pos = (await call("get_positions")).positions;
      expect(pos).toHaveLength(1);
      expect(pos[0]).toMatchObject({ token_id: DEM_YES, shares: "15", avg_price: "0.493333", cost_usdc: "7.4", realized_pnl_usdc: "0" });
      // Marked at the book's mid; the tool gives what the REST route gives.
      const rest = await sdk.getPositions(x.id);
      expect(pos).toEqual(rest.positions as any[]);
    } finally {
      await mcp.close();
    }
  }, 60_000);
});
