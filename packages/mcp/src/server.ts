/**
 * The brokerage as an MCP server (official MCP TypeScript SDK v2, @modelcontextprotocol/server): eleven
 * tools over the SDK, and resources for the agent's limits and open orders. The same definition
 * serves both protocol eras (2026-07-28 and the 2025 revisions). Only the public REST API is used, through @agent-brokerage/sdk.
 */
import { BrokerClient, type IntentRequest, type PayloadIntentAnswer, type VenueCredentials } from "@agent-brokerage/sdk";
import { McpServer, type CallToolResult } from "@modelcontextprotocol/server";
import type { PrivateKeyAccount } from "viem/accounts";
import { z } from "zod";
import type { RecentEvents } from "./recent-events.js";
import { errorResult, errorText, ok, riskRejection } from "./tool-result.js";

export const SERVER_NAME = "agent-brokerage";
export const SERVER_VERSION = "0.1.0";

export interface BrokerMcpOptions {
  client: BrokerClient;
  agentId?: string;
  signer?: PrivateKeyAccount;
  venueCredentials?: VenueCredentials;
  /** Payload answers awaiting a signature, by order id; shared by every session of the process. */
  pending?: Map<string, PayloadIntentAnswer>;
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

// ------------------------------------------------------------------ server

export function createBrokerMcpServer(o: BrokerMcpOptions): McpServer {
  const { client } = o;
  const pending = o.pending ?? new Map<string, PayloadIntentAnswer>();
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION, title: "Agent brokerage" },
    {
      instructions:
        "Trade prediction markets through a risk-checked, non-custodial brokerage. Find a market with list_markets, " +
        "test an order with check_intent, place it with place_intent (every intent passes eight risk checks; a refusal lists " +
        "each failed check with its limit and actual value), then sign_and_submit it in payload mode. kill_switch cancels everything.",
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
        "Lists tradable outcome tokens with their order book summary. Each market_id is one outcome (e.g. Yes) of a question; prices are USDC per share (0-1). Reads only.",
      inputSchema: z.object({
        category: z.string().optional().describe("Only this category (e.g. politics, crypto, sports)."),
        active: z.boolean().optional().describe("Only active (true) or inactive (false) markets."),
        limit: z.number().int().min(1).max(200).optional().describe("Page size, 1-200 (default 50)."),
        cursor: z.string().optional().describe("next_cursor of the previous page."),
      }),
      outputSchema: z.object({ markets: z.array(market), next_cursor: z.string().nullable() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const page = await client.listMarkets(a);
      return ok({ markets: page.data, next_cursor: page.next_cursor }, `${page.data.length} market(s).`);
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
      pending.set(answer.order_id, answer);
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
        "Signs the unsigned order of a payload-mode place_intent with this server's configured key (or takes a signature you made) and forwards it to the venue. " +
        "The key never leaves this process. Afterwards the order is open (resting) or filled. Calling it again for the same order changes nothing.",
      inputSchema: z.object({
        order_id: z.string().regex(/^ord_/).describe("order_id from place_intent (payload mode)."),
        signature: z.string().regex(/^0x[0-9a-fA-F]+$/).optional().describe("Your own EIP-712 signature of unsigned_order (0x + 130 hex). Leave out to sign with the configured key."),
      }),
      outputSchema: z.object({ order_id: z.string(), status: z.string(), venue_order_id: z.string().nullable() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const answer = pending.get(a.order_id);
      let submitted;
      if (a.signature) {
        submitted = await client.submitSigned({ order_id: a.order_id, signature: a.signature as `0x${string}` });
      } else {
        if (!o.signer) return errorText("no_signer", "No signing key is configured (BROKER_PRIVATE_KEY). Sign unsigned_order yourself and pass signature.");
        if (!answer) return errorText("unknown_order", `This server holds no unsigned order ${a.order_id}: place it with place_intent in this server process first, or pass signature.`);
        submitted = await client.signAndSubmit(answer, o.signer, { venueCredentials: o.venueCredentials });
      }
      pending.delete(a.order_id);
      return ok({ order_id: submitted.order_id, status: submitted.status, venue_order_id: submitted.venue_order_id }, `Order ${submitted.order_id} is ${submitted.status}.`);
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
      const cancelled = await client.cancelOrder(a.order_id, o.venueCredentials ? { venueCredentials: o.venueCredentials } : {});
      pending.delete(a.order_id);
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
        failed: z.array(z.string()),
        credentials_deleted: z.boolean(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    guarded(async (a) => {
      const k = await client.kill(needAgent(a.agent_id), a.reason ? { reason: a.reason } : {}, o.venueCredentials ? { venueCredentials: o.venueCredentials } : {});
      return ok(
        { kill_id: k.kill_id, agent_id: k.agent_id, duration_ms: k.duration_ms, cancelled: k.cancelled, failed: k.failed, credentials_deleted: k.credentials_deleted },
        `Agent ${k.agent_id} halted: ${k.cancelled.length} cancelled, ${k.failed.length} failed (flagged for review).`,
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
      const agent = a.off ? await client.clearHeartbeat(id) : a.interval_s !== undefined ? await client.setHeartbeat(id, { interval_s: a.interval_s }) : await client.heartbeat(id);
      const hb = agent.heartbeat ?? null;
      return ok(
        { agent_id: agent.id, heartbeat: hb },
        hb ? `Heartbeat on: beat again before ${hb.deadline_at} (every ${hb.interval_s} s at most) or the agent is killed.` : "Heartbeat off.",
      );
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
