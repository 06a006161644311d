/**
 * The brokerage as an MCP server (official MCP TypeScript SDK v2, @modelcontextprotocol/server): fourteen
 * tools over the SDK, and resources for the agent's limits and open orders. The same definition
 * serves both protocol eras (2026-07-28 and the 2025 revisions). Only the public REST API is used, through @agent-brokerage/sdk.
 */
import { BrokerClient, BrokerError, type IntentRequest, type Order, type SignableAnswer, type VenueCredentials } from "@agent-brokerage/sdk";
import { McpServer, type CallToolResult } from "@modelcontextprotocol/server";
import type { PrivateKeyAccount } from "viem/accounts";
import { z } from "zod";
import type { RecentEvents } from "./recent-events.js";
import { errorResult, errorText, ok, okCompact, riskRejection } from "./tool-result.js";

export const SERVER_NAME = "agent-brokerage";
export const SERVER_VERSION = "0.1.0";

export interface BrokerMcpOptions {
  client: BrokerClient;
  agentId?: string;
  signer?: PrivateKeyAccount;
  venueCredentials?: VenueCredentials;
  /** The agent's recent events, for the broker://events/recent resource. */
  recentEvents?: RecentEvents;
}

// ------------------------------------------------------------------ schemas

const agentIdInput = z
  .string()
  .regex(/^agt_/)
  .optional()
  .describe("The agent to act for (agt_...). Leave out to use the configured agent (BROKER_AGENT_ID) or the agent of an agent-scoped key.");
const intentInput = {
  market_id: z.string().regex(/^[0-9]{1,78}$/).describe("Outcome token id (a decimal number string) from list_markets' market_id."),
  side: z.enum(["buy", "sell"]).describe("buy or sell shares of this outcome."),
  size_usdc: z.number().positive().describe("Order size in USDC (dollars, up to 6 decimals). Default limits: 1 to 100 per order, 1000 per UTC day."),
  price: z.number().gt(0).lt(1).describe("Limit price per share in USDC, strictly between 0 and 1, a multiple of the market's tick_size, within price_band (default 0.10) of the mid."),
  probability: z.number().gt(0).lt(1).optional().describe("Your belief that this outcome resolves yes (0-1). Enables the Kelly cap; without it the size is capped at 2% of capital."),
  order_type: z.enum(["GTC", "GTD", "FOK", "FAK"]).optional().describe("GTC (default) rests until cancelled; GTD until expires_at; FOK/FAK fill now or not at all / partially."),
  expires_at: z.string().optional().describe("ISO 8601 time; required for GTD, refused otherwise."),
  agent_id: agentIdInput,
};
const failure = z.looseObject({ check: z.string(), code: z.string(), message: z.string(), limit: z.any(), actual: z.any() });
const check = z.object({ check: z.string(), passed: z.boolean() });
const market = z.looseObject({
    market_id: z.string(),
    question: z.string(),
    outcome: z.string(),
    category: z.string().nullable(),
    accepting_orders: z.boolean(),
    tick_size: z.string().describe("price increment, decimal string"),
    min_order_size: z.string().describe("smallest order in shares, decimal string"),
    best_bid: z.string().nullable().describe("USDC per share, decimal string"),
    best_ask: z.string().nullable().describe("USDC per share, decimal string"),
  mid: z.string().nullable().describe("USDC per share, decimal string"),
});
const order = z.looseObject({
    id: z.string(),
    agent_id: z.string(),
    market_id: z.string(),
    side: z.string(),
    size_usdc: z.number(),
    price: z.number(),
    status: z.string(),
    venue_order_id: z.string().nullable(),
    filled_usdc: z.number(),
  flagged_for_review: z.boolean(),
});
const agent = z.looseObject({
    id: z.string(),
    mode: z.string(),
    wallet_address: z.string(),
  breaker: z.looseObject({ state: z.string(), reason: z.string().nullable() }),
  daily_volume: z.looseObject({ used_usdc: z.number(), limit_usdc: z.number() }),
  open_orders: z.number(),
  limits: z.record(z.string(), z.any()),
});

type IntentArgs = z.infer<z.ZodObject<typeof intentInput>>;

/** Statuses an order never leaves. */
const FINAL = new Set(["filled", "cancelled", "expired", "rejected", "failed"]);

/**
 * sign_and_submit for an order that no longer awaits its signature: a success when it was submitted
 * (a repeat, or a retry after a lost answer), an error that says why otherwise; never an invitation to
 * place again an order that reached the venue.
 */
function notAwaiting(order: Order): CallToolResult {
  const wasSubmitted = ["submitting", "open", "filled", "unknown"].includes(order.status) || order.history.some((h) => h.status === "submitting" || h.status === "open");
  if (wasSubmitted) {
    const more =
      order.status === "unknown"
        ? "its outcome at the venue is being reconciled; do not place it again."
        : order.status === "submitting"
          ? "it is on its way to the venue; follow it with get_order."
          : "follow it with get_order.";
    return ok(
      { order_id: order.id, status: order.status, venue_order_id: order.venue_order_id, already_submitted: true },
      `Already submitted: order ${order.id} is ${order.status}. Nothing more to do; ${more}`,
    );
  }
  if (order.status === "pending_approval") {
    return errorText("pending_approval", `Order ${order.id} waits for a person's approval. Call sign_and_submit again once get_order shows awaiting_signature; do not place it again.`);
  }
  return errorText(
    "not_signable",
    `Order ${order.id} is ${order.status} and was never sent to the venue; it can no longer be signed. Place a new intent only if you still want this trade.`,
  );
}

// ------------------------------------------------------------------ server

export function createBrokerMcpServer(o: BrokerMcpOptions): McpServer {
  const { client } = o;
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION, title: "Agent brokerage" },
    {
      instructions:
        "Trade prediction markets through a risk-checked, non-custodial brokerage. Find a market with list_markets, " +
        "test an order with check_intent, place it with place_intent (every intent passes eight risk checks; a refusal lists " +
        "each failed check with its limit and actual value), then sign_and_submit it in payload mode (any order awaiting a signature, e.g. after a person's approval). " +
        "cancel_all cancels open orders and keeps trading; kill_switch halts the agent until a person resumes it. Tools marked idempotent may be retried safely: a repeat answers the current state.",
    },
  );

  const agentOf = (id: string | undefined) => id ?? o.agentId;
  const guarded =
    <A>(fn: (args: A) => Promise<CallToolResult>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return await fn(args);
      } catch (err) {
        return errorResult(err);
      }
    };
  const needAgent = (id: string | undefined): string => {
    const a = agentOf(id);
    if (!a) throw new Error("no agent: pass agent_id, or configure BROKER_AGENT_ID");
    return a;
  };
  const toIntent = (a: IntentArgs): IntentRequest => {
    const body: IntentRequest = { market_id: a.market_id, side: a.side, size_usdc: a.size_usdc, price: a.price };
    const agentId = agentOf(a.agent_id);
    if (agentId) body.agent_id = agentId;
    if (a.probability !== undefined) body.probability = a.probability;
    if (a.order_type) body.order_type = a.order_type;
    if (a.expires_at) body.expires_at = a.expires_at;
    return body;
  };

  server.registerTool(
    "list_markets",
    {
      title: "List markets",
      description:
        "Lists tradable outcome tokens (active, not closed, accepting orders) with their best bid/ask, one line each. Each market_id is one outcome (e.g. Yes) of a question; " +
        "prices are USDC per share (0-1). query searches the question text. Reads only.",
      inputSchema: z.object({
        query: z.string().min(1).max(200).optional().describe("Words that must all appear in the question (case-insensitive), e.g. \"bitcoin 2026\"."),
        category: z.string().optional().describe("Only this category (e.g. politics, crypto, sports)."),
        include_untradable: z.boolean().optional().describe("true also lists closed, inactive and not-accepting markets (default false)."),
        limit: z.number().int().min(1).max(200).optional().describe("Page size, 1-200 (default 20)."),
        cursor: z.string().optional().describe("next_cursor of the previous page."),
      }),
      outputSchema: z.object({ markets: z.array(market), next_cursor: z.string().nullable() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const tradable = a.include_untradable ? {} : { active: true, closed: false, accepting_orders: true };
      const page = await client.listMarkets({ ...tradable, q: a.query, category: a.category, limit: a.limit ?? 20, cursor: a.cursor });
      const lines = page.data.map(
        (m) =>
          `${m.market_id} | ${m.question} [${m.outcome}] | bid ${m.best_bid ?? "-"} ask ${m.best_ask ?? "-"} | tick ${m.tick_size}, min ${m.min_order_size} sh` +
          (m.accepting_orders && m.active !== false && m.closed !== true ? "" : " | NOT TRADABLE"),
      );
      const more = page.next_cursor ? `\nMore: call again with cursor ${page.next_cursor}.` : "";
      return okCompact({ markets: page.data, next_cursor: page.next_cursor }, `${page.data.length} market(s) (market_id | question [outcome] | prices USDC/share):\n${lines.join("\n")}${more}`);
    }),
  );

  server.registerTool(
    "get_market",
    {
      title: "Get a market",
      description: "One outcome token: question, tick_size, min_order_size (shares), best bid/ask, mid and last trade price (USDC per share, 0-1). Reads only.",
      inputSchema: z.object({ market_id: intentInput.market_id }),
      outputSchema: z.object({ market }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => ok({ market: await client.getMarket(a.market_id) })),
  );

  server.registerTool(
    "check_intent",
    {
      title: "Check an order intent (dry run)",
      description:
        "Runs the eight risk checks (breaker, market filters, order size, daily volume, concentration, Kelly cap, price sanity, liquidity impact) on an intent without placing anything. " +
        "When any check fails the result is an error listing every failed check with its limit and actual value: adjust size_usdc, price or probability to fit. Changes nothing.",
      inputSchema: z.object(intentInput),
      outputSchema: z.object({ approved: z.boolean(), checks: z.array(check), failures: z.array(failure) }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    guarded(async (a) => {
      const { risk } = await client.checkIntent(toIntent(a));
      const failures = risk.failures ?? [];
      if (!risk.approved) return riskRejection(failures, { checks: risk.checks, dry_run: true });
      return ok({ approved: true, checks: risk.checks, failures }, "All eight checks pass; place_intent would be approved now.");
    }),
  );

  server.registerTool(
    "place_intent",
    {
      title: "Place an order intent",
      description:
        "Places an order intent after the eight risk checks. It reserves the size against the agent's daily volume and market exposure. " +
        "Payload mode (default): answers an unsigned EIP-712 order; call sign_and_submit with its order_id before signature_deadline or it expires. " +
        "Delegated mode: the order is sent to the venue at once and venue_order_id is returned. Above the agent's approval threshold the status is pending_approval: " +
        "a person approves or rejects it, do not place it again. A refusal lists every failed check with its limit and actual value.",
      inputSchema: z.object({ ...intentInput, client_order_id: z.string().min(1).max(64).optional().describe("Your own reference for this order.") }),
      outputSchema: z.object({
        order_id: z.string(),
        mode: z.enum(["payload", "delegated"]),
        status: z.string(),
        venue_order_id: z.string().nullable().optional(),
        order_hash: z.string().optional(),
        signature_deadline: z.string().optional(),
        approval_deadline: z.string().optional(),
        unsigned_order: z.any().optional(),
        next_step: z.string(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    guarded(async (a) => {
      const body = toIntent(a);
      if (a.client_order_id) body.client_order_id = a.client_order_id;
      const answer = await client.placeIntent(body);
      if (answer.status === "pending_approval") {
        return ok({
          order_id: answer.order_id,
          mode: answer.mode,
          status: answer.status,
          order_hash: answer.order_hash ?? undefined,
          approval_deadline: answer.approval_deadline,
          next_step: `The size is above the agent's approval threshold: the order is reserved and waits for a person to approve or reject it before ${answer.approval_deadline}. Follow it with get_order; do not place it again.`,
        });
      }
      if (answer.mode === "delegated") {
        return ok({ order_id: answer.order_id, mode: "delegated", status: answer.status, venue_order_id: answer.venue_order_id, next_step: "The order is at the venue; follow it with get_order." });
      }
      return ok({
        order_id: answer.order_id,
        mode: "payload",
        status: answer.status,
        order_hash: answer.order_hash,
        signature_deadline: answer.signature_deadline,
        unsigned_order: answer.unsigned_order,
        next_step: o.signer
          ? `Call sign_and_submit with order_id ${answer.order_id} before ${answer.signature_deadline}.`
          : `Sign unsigned_order (EIP-712) with the agent's wallet and call sign_and_submit with order_id and signature before ${answer.signature_deadline}.`,
      });
    }),
  );

  server.registerTool(
    "sign_and_submit",
    {
      title: "Sign and submit an order",
      description:
        "Signs a payload-mode order that awaits its signature (from place_intent, or after a person approved it) with this server's configured key (or takes a signature you made) and forwards it to the venue. " +
        "The order is read from the brokerage, so it works after an approval or a restart. The key never leaves this process. Afterwards the order is open (resting) or filled. " +
        "Calling it again for the same order changes nothing and answers its current status (already open, filled, ...).",
      inputSchema: z.object({
        order_id: z.string().regex(/^ord_/).describe("order_id from place_intent (payload mode)."),
        signature: z.string().regex(/^0x[0-9a-fA-F]+$/).optional().describe("Your own EIP-712 signature of unsigned_order (0x + 130 hex). Leave out to sign with the configured key."),
      }),
      outputSchema: z.object({ order_id: z.string(), status: z.string(), venue_order_id: z.string().nullable(), already_submitted: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const order = await client.getOrder(a.order_id);
      if (order.status !== "awaiting_signature") return notAwaiting(order);
      let submitted;
      try {
        if (a.signature) {
          submitted = await client.submitSigned({ order_id: a.order_id, signature: a.signature as `0x${string}` });
        } else {
          if (!o.signer) return errorText("no_signer", "No signing key is configured (BROKER_PRIVATE_KEY). Sign unsigned_order (get_order shows it) yourself and pass signature.");
          if (!order.unsigned_order) return notAwaiting(await client.getOrder(a.order_id));
          const signable: SignableAnswer = {
            order_id: order.id,
            mode: "payload",
            unsigned_order: order.unsigned_order,
            order_type: order.order_type,
            expiration: order.expiration ?? "0",
          } as SignableAnswer;
          submitted = await client.signAndSubmit(signable, o.signer, { venueCredentials: o.venueCredentials });
        }
      } catch (err) {
        // Submitted meanwhile (a retry racing the first call): answer the order's state, not an error.
        if (err instanceof BrokerError && err.code === "invalid_state") return notAwaiting(await client.getOrder(a.order_id));
        throw err;
      }
      return ok(
        { order_id: submitted.order_id, status: submitted.status, venue_order_id: submitted.venue_order_id, already_submitted: false },
        `Order ${submitted.order_id} is ${submitted.status}.`,
      );
    }),
  );

  server.registerTool(
    "get_order",
    {
      title: "Get an order",
      description: "One order with its status (awaiting_signature, open, filled, cancelled, expired, rejected, failed, unknown), filled_usdc and status history. Reads only.",
      inputSchema: z.object({ order_id: z.string().regex(/^ord_/).describe("The order id (ord_...).") }),
      outputSchema: z.object({ order }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    guarded(async (a) => ok({ order: await client.getOrder(a.order_id) })),
  );

  server.registerTool(
    "list_orders",
    {
      title: "List orders",
      description: "The agent's orders, newest first, optionally by status. Sizes and fills in USDC. Reads only.",
      inputSchema: z.object({
        status: z
          .enum(["pending_approval", "awaiting_signature", "submitting", "open", "filled", "cancelled", "expired", "rejected", "failed", "unknown"])
          .optional()
          .describe("Only orders in this status."),
        limit: z.number().int().min(1).max(200).optional().describe("Page size, 1-200 (default 50)."),
        cursor: z.string().optional().describe("next_cursor of the previous page."),
        agent_id: agentIdInput,
      }),
      outputSchema: z.object({ orders: z.array(order), next_cursor: z.string().nullable() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    guarded(async (a) => {
      const page = await client.listOrders({ agent_id: agentOf(a.agent_id), status: a.status, limit: a.limit, cursor: a.cursor });
      return ok({ orders: page.data, next_cursor: page.next_cursor }, `${page.data.length} order(s).`);
    }),
  );

  server.registerTool(
    "cancel_order",
    {
      title: "Cancel an order",
      description: "Cancels one order: at once if it awaits a signature, at the venue if it is open. Its unfilled size is released from the limits. Cancelling twice changes nothing more.",
      inputSchema: z.object({ order_id: z.string().regex(/^ord_/).describe("The order id (ord_...).") }),
      outputSchema: z.object({ order }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      // Payload mode at a real CLOB: the owner's venue keys sign the cancel (docs/api.md#payload-mode-cancels).
      let cancelled: Order;
      try {
        cancelled = await client.cancelOrder(a.order_id, o.venueCredentials ? { venueCredentials: o.venueCredentials } : {});
      } catch (err) {
        // Already in a final status (a repeat, or it filled or expired first): the current state, as a success.
        if (!(err instanceof BrokerError && err.code === "invalid_state")) throw err;
        const current = await client.getOrder(a.order_id);
        if (!FINAL.has(current.status)) throw err;
        return ok({ order: current }, `Nothing to cancel: order ${current.id} is already ${current.status}${current.status === "filled" ? " (it filled before the cancel)" : ""}. It no longer rests at the venue.`);
      }
      return ok({ order: cancelled }, `Order ${cancelled.id} is ${cancelled.status}.`);
    }),
  );

  server.registerTool(
    "get_agent",
    {
      title: "Get the agent",
      description:
        "The agent's mode (payload or delegated), breaker (closed, or tripped with a reason), daily volume used and limit (USDC), open order count and every risk limit. Reads only.",
      inputSchema: z.object({ agent_id: agentIdInput }),
      outputSchema: z.object({ agent }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    guarded(async (a) => ok({ agent: await client.getAgent(needAgent(a.agent_id)) })),
  );

  server.registerTool(
    "kill_switch",
    {
      title: "Kill switch",
      description:
        "Emergency stop for the agent: trips its breaker at once (every new intent is refused), cancels every open order within 5 seconds, and in delegated mode deletes the stored venue credentials for good. " +
        "The agent stays halted until a person resumes it. Use when something is wrong. A second call changes nothing more.",
      inputSchema: z.object({ agent_id: agentIdInput, reason: z.string().max(200).optional().describe("Why, for the record.") }),
      outputSchema: z.object({
        kill_id: z.string(),
        agent_id: z.string(),
        duration_ms: z.number(),
        cancelled: z.array(z.string()),
        filled: z.array(z.string()),
        failed: z.array(z.string()),
        credentials_deleted: z.boolean(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const k = await client.kill(needAgent(a.agent_id), a.reason ? { reason: a.reason } : {}, o.venueCredentials ? { venueCredentials: o.venueCredentials } : {});
      return ok(
        {
          kill_id: k.kill_id,
          agent_id: k.agent_id,
          duration_ms: k.duration_ms,
          cancelled: k.cancelled,
          filled: k.filled ?? [],
          failed: k.failed,
          credentials_deleted: k.credentials_deleted,
        },
        `Agent ${k.agent_id} halted until a person resumes it: ${k.cancelled.length} cancelled, ${(k.filled ?? []).length} had already filled, ${k.failed.length} failed (not confirmed in time, flagged for review).`,
      );
    }),
  );

  server.registerTool(
    "heartbeat",
    {
      title: "Heartbeat (dead-man switch)",
      description:
        "Keeps the agent's dead-man switch alive. With interval_s (5-3600) it turns the switch on: from then on, unless this tool is called again (a beat) " +
        "before deadline_at, the service kills the agent (cancels its orders, trips its breaker) as kill_switch does. Without arguments it is a beat and moves " +
        "deadline_at interval_s ahead; a beat after the deadline fails with agent_halted (the agent is already killed). off: true turns the switch off.",
      inputSchema: z.object({
        agent_id: agentIdInput,
        interval_s: z.number().int().min(5).max(3600).optional().describe("Turn the switch on (or change it) with this many seconds allowed between beats."),
        off: z.boolean().optional().describe("true turns the switch off; leave out for a beat."),
      }),
      outputSchema: z.object({
        agent_id: z.string(),
        heartbeat: z.object({ interval_s: z.number(), last_at: z.string().nullable(), deadline_at: z.string() }).nullable(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    guarded(async (a) => {
      const id = needAgent(a.agent_id);
      if (a.off && a.interval_s !== undefined) return errorText("invalid_arguments", "Pass interval_s to turn the switch on, or off: true to turn it off, not both.");
      let agent;
      try {
        agent = a.off ? await client.clearHeartbeat(id) : a.interval_s !== undefined ? await client.setHeartbeat(id, { interval_s: a.interval_s }) : await client.heartbeat(id);
      } catch (err) {
        if (err instanceof BrokerError && err.code === "invalid_state" && !a.off && a.interval_s === undefined) {
          return errorText("heartbeat_off", "The dead-man switch is off, so there is nothing to beat. To turn it on, call heartbeat with interval_s (5-3600); then beat by calling heartbeat again before deadline_at.");
        }
        throw err;
      }
      const hb = agent.heartbeat ?? null;
      return ok(
        { agent_id: agent.id, heartbeat: hb },
        hb ? `Heartbeat on: beat again before ${hb.deadline_at} (every ${hb.interval_s} s at most) or the agent is killed.` : "Heartbeat off.",
      );
    }),
  );

  server.registerTool(
    "cancel_all",
    {
      title: "Cancel all open orders (keep trading)",
      description:
        "Cancels the agent's open orders (all, or one market's) concurrently within 5 seconds, without halting the agent: its breaker stays closed and it can place new intents at once. " +
        "An order whose cancel the venue does not confirm in time is marked failed and flagged for review. Calling it again cancels only what is still open.",
      inputSchema: z.object({
        agent_id: agentIdInput,
        market_id: intentInput.market_id.optional().describe("Only this outcome token's orders (market_id from list_markets); leave out for all."),
      }),
      outputSchema: z.object({
        agent_id: z.string(),
        market_id: z.string().nullable(),
        duration_ms: z.number(),
        cancelled: z.array(z.string()),
        filled: z.array(z.string()),
        failed: z.array(z.string()),
        breaker: z.string(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const r = await client.cancelAll(needAgent(a.agent_id), a.market_id ? { market_id: a.market_id } : {}, o.venueCredentials ? { venueCredentials: o.venueCredentials } : {});
      const where = r.market_id ? ` in market ${r.market_id}` : "";
      const summary =
        r.cancelled.length + r.filled.length + r.failed.length === 0
          ? `No open orders${where}: nothing to cancel. The agent can keep trading.`
          : `${r.cancelled.length} cancelled, ${r.filled.length} had already filled, ${r.failed.length} failed (not confirmed in time, flagged for review)${where}. The agent keeps trading (breaker ${r.agent.breaker.state}).`;
      return ok(
        { agent_id: r.agent_id, market_id: r.market_id, duration_ms: r.duration_ms, cancelled: r.cancelled, filled: r.filled, failed: r.failed, breaker: r.agent.breaker.state },
        summary,
      );
    }),
  );

  server.registerTool(
    "get_book",
    {
      title: "Get a market's order book",
      description: "The depth of one outcome token's order book at the venue: price levels (USDC per share) and sizes (shares), best first. Use it to size an order that the liquidity check accepts. Reads only.",
      inputSchema: z.object({
        market_id: intentInput.market_id,
        depth: z.number().int().min(1).max(100).optional().describe("Levels per side, 1-100 (default 10)."),
      }),
      outputSchema: z.object({
        market_id: z.string(),
        bids: z.array(z.object({ price: z.string(), size: z.string() })),
        asks: z.array(z.object({ price: z.string(), size: z.string() })),
        bid_levels: z.number(),
        ask_levels: z.number(),
        last_trade_price: z.string().nullable(),
        timestamp: z.string(),
      }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const b = await client.getBook(a.market_id, { depth: a.depth ?? 10 });
      const side = (levels: { price: string; size: string }[]) => (levels.length ? levels.map((l) => `${l.price} x ${l.size}`).join(", ") : "(empty)");
      return okCompact(
        { ...b },
        `Book of ${b.market_id} at ${b.timestamp} (price x shares, best first):\nbids: ${side(b.bids)}${b.bid_levels > b.bids.length ? ` (+${b.bid_levels - b.bids.length} more levels)` : ""}\nasks: ${side(b.asks)}${b.ask_levels > b.asks.length ? ` (+${b.ask_levels - b.asks.length} more levels)` : ""}\nlast trade: ${b.last_trade_price ?? "-"}`,
      );
    }),
  );

  server.registerTool(
    "get_positions",
    {
      title: "Get the agent's positions",
      description:
        "The agent's positions per outcome token: shares held, average price, cost, realized and unrealized P&L (USDC) and the mark price. Reads only.",
      inputSchema: z.object({ agent_id: agentIdInput }),
      outputSchema: z.object({
        agent_id: z.string(),
        positions: z.array(
          z.looseObject({
            token_id: z.string(),
            market_id: z.string().nullable().optional(),
            shares: z.any(),
            avg_price: z.any(),
            cost_usdc: z.any(),
            realized_pnl_usdc: z.any(),
            mark_price: z.any(),
            unrealized_pnl_usdc: z.any(),
          }),
        ),
      }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    guarded(async (a) => {
      const id = needAgent(a.agent_id);
      let answer: { agent_id: string; positions: Record<string, unknown>[] };
      try {
        answer = await client.transport.call("GET", `/v1/agents/${encodeURIComponent(id)}/positions`);
      } catch (err) {
        if (err instanceof BrokerError && err.status === 404 && /route/i.test(err.detail ?? "")) {
          return errorText("not_supported", "This brokerage does not serve positions (GET /v1/agents/{id}/positions answered 404: no such route). Use list_orders and get_agent instead; a person may upgrade the service.");
        }
        throw err;
      }
      const lines = answer.positions.map(
        (p) => `${p.token_id}: ${p.shares} sh @ ${p.avg_price ?? "-"} (cost ${p.cost_usdc ?? "-"}), mark ${p.mark_price ?? "-"}, unrealized ${p.unrealized_pnl_usdc ?? "-"}, realized ${p.realized_pnl_usdc ?? "-"}`,
      );
      return okCompact({ agent_id: answer.agent_id, positions: answer.positions }, `${answer.positions.length} position(s) of ${answer.agent_id}${lines.length ? `:\n${lines.join("\n")}` : "."}`);
    }),
  );

  if (o.agentId) {
    const agentId = o.agentId;
    server.registerResource(
      "agent_limits",
      "broker://agent/limits",
      { title: "Agent risk limits", description: "The configured agent's risk limits, breaker and daily volume.", mimeType: "application/json" },
      async (uri) => {
        const a = await client.getAgent(agentId);
        const body = { agent_id: a.id, mode: a.mode, breaker: a.breaker, daily_volume: a.daily_volume, limits: a.limits };
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(body, null, 2) }] };
      },
    );
    server.registerResource(
      "open_orders",
      "broker://agent/orders/open",
      { title: "Open orders", description: "The configured agent's open orders and those awaiting a signature.", mimeType: "application/json" },
      async (uri) => {
        const [open, awaiting] = await Promise.all([
          client.listOrders({ agent_id: agentId, status: "open", limit: 200 }),
          client.listOrders({ agent_id: agentId, status: "awaiting_signature", limit: 200 }),
        ]);
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ orders: [...open.data, ...awaiting.data] }, null, 2) }] };
      },
    );
  }
  if (o.recentEvents) {
    const feed = o.recentEvents;
    server.registerResource(
      "recent_events",
      "broker://events/recent",
      {
        title: "Recent events",
        description: "The configured agent's latest events (order status changes, risk rejections with their failures, breaker trips, kills), oldest first.",
        mimeType: "application/json",
      },
      async (uri) => ({ contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(feed.snapshot(), null, 2) }] }),
    );
  }
  return server;
}
