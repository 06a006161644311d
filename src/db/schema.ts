/**
 * The one source of persisted shapes. Migrations under drizzle/ are generated
 * from this file by drizzle-kit (`bun run db:generate`) and inlined into
 * src/db/migrations.generated.ts so the compiled binary carries them.
 *
 * Money is stored as bigint 6-decimal USDC base units; prices as exact decimal text.
 */
import { sql } from "drizzle-orm";
import type { BreakerReason, OrderStatus } from "../domain/order-status.ts";
import type { FillStatus } from "../domain/venue-report.ts";
import type { OrderDomain } from "../eip712/order-typed-data.ts";
import type { OrderMessage } from "../domain/order-message.ts";
import { jsonbOrdered } from "./jsonb-order.ts";
import { bigint, bigserial, boolean, customType, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (v) => new Uint8Array(v),
});

/**
 * A JSON document stored as text: written as JSON.stringify makes it, read back with its object keys in
 * jsonb's order (jsonbOrdered), so the API serves it as it did from the jsonb column it replaced. Used
 * for the documents of the order row, which the hot insert writes for every intent and no query looks
 * inside: PostgreSQL's jsonb input (parsing, building the tree, sorting keys) was 15 % of its CPU per
 * order (docs/decisions.md, "Order documents as JSON text, typed number and time parameters").
 */
const jsonText = <T>(name: string) =>
  customType<{ data: T; driverData: string }>({
    dataType: () => "text",
    toDriver: (v) => JSON.stringify(v),
    fromDriver: (v) => jsonbOrdered(JSON.parse(v)) as T,
  })(name);

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
const units = (name: string) => bigint(name, { mode: "bigint" });

export const orgs = pgTable("orgs", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: ts("created_at").notNull().defaultNow(),
  /** Set by the firm-wide kill (POST /v1/kill): agents created while set start halted; cleared by POST /v1/resume. */
  haltedAt: ts("halted_at"),
  /** The agents the firm-wide kill halted (and those created while halted): POST /v1/resume resumes these. */
  haltKillAgentIds: jsonb("halt_kill_agent_ids").$type<string[]>(),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => orgs.id),
    name: text("name"),
    agentId: text("agent_id"),
    keyHash: text("key_hash").notNull(),
    hint: text("hint").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    revokedAt: ts("revoked_at"),
    /** When the key last authenticated a request, recorded at most once a minute per key. */
    lastUsedAt: ts("last_used_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.keyHash), index("api_keys_org_idx").on(t.orgId, t.createdAt)],
);


export const agents = pgTable(
  "agents",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => orgs.id),
    name: text("name"),
    mode: text("mode").$type<"payload" | "delegated">().notNull().default("payload"),
    walletAddress: text("wallet_address").notNull(),
    signerAddress: text("signer_address").notNull(),
    signatureType: integer("signature_type").notNull().default(0),
    /** The EOA that signs for a deposit wallet (signature type 3); null for types 0 to 2. */
    ownerAddress: text("owner_address"),
    limits: jsonb("limits").$type<Record<string, unknown>>().notNull(),
    breakerState: text("breaker_state").$type<"closed" | "tripped">().notNull().default("closed"),
    breakerReason: text("breaker_reason").$type<BreakerReason | null>(),
    breakerSince: ts("breaker_since"),
    venueErrorStreak: integer("venue_error_streak").notNull().default(0),
    /** Dead-man switch (docs/api.md#heartbeat-dead-man-switch): null when off. */
    heartbeatIntervalS: integer("heartbeat_interval_s"),
    heartbeatLastAt: ts("heartbeat_last_at"),
    /** When the agent is killed (reason heartbeat) unless a beat comes first; kept so a restart keeps it. */
    heartbeatDeadlineAt: ts("heartbeat_deadline_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("agents_org_idx").on(t.orgId, t.createdAt),
    index("agents_wallet_idx").on(t.walletAddress),
    index("agents_heartbeat_deadline_idx").on(t.heartbeatDeadlineAt),
  ],
);

/** Sealed venue credentials of a delegated agent: ciphertext only. */
export const credentials = pgTable("credentials", {
  agentId: text("agent_id").primaryKey().references(() => agents.id),
  ciphertext: bytea("ciphertext").notNull(),
  scopes: jsonb("scopes").$type<string[]>().notNull(),
  keyHint: text("key_hint").notNull(),
  createdAt: ts("created_at").notNull().defaultNow(),
});

export type { BreakerReason, OrderStatus };

/**
 * orders.watch (migration 0024, stored, generated from the status): 'sign' while awaiting a signature,
 * 'approve' while pending approval, 'venue' while submitting, open or unknown, null once ended. A
 * placement (submitting to open) leaves it as it is.
 */
export const ORDER_WATCH = sql`"orders"."watch"`;
/** orders.venue_ref (migration 0024, stored, generated): the venue's order id when it is not the order's hash, else null. */
export const ORDER_VENUE_REF = sql`"orders"."venue_ref"`;

/** `by`: who decided, for a person's approval or rejection (the API key id). */
export type OrderHistoryEntry = { status: OrderStatus; at: string; reason: string | null; by?: string };

export const orders = pgTable(
  "orders",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    /**
     * No foreign key: its check locks the agent's row for every order written (about 15 % of
     * PostgreSQL's CPU per intent). An agent's rows are removed only through its actor
     * (AgentService.retire), after the order writes it started and before any other.
     */
    agentId: text("agent_id").notNull(),
    mode: text("mode").$type<"payload" | "delegated">().notNull(),
    marketId: text("market_id").notNull(),
    conditionId: text("condition_id").notNull(),
    side: text("side").$type<"buy" | "sell">().notNull(),
    sizeUnits: units("size_units").notNull(),
    price: text("price").notNull(),
    /** Exact notional (shares × price) reserved against the limits. */
    notionalUnits: units("notional_units").notNull(),
    orderType: text("order_type").$type<"GTC" | "GTD" | "FOK" | "FAK">().notNull(),
    expiration: text("expiration").notNull().default("0"),
    status: text("status").$type<OrderStatus>().notNull(),
    orderHash: text("order_hash"),
    /**
     * The unsigned order's EIP-712 domain, primaryType and message. Its types are always
     * ORDER_TYPES, so they are not stored: with them a row passes PostgreSQL's 2 kB TOAST
     * threshold and every insert pays for compressing it.
     */
    typedData: jsonText<{ domain: OrderDomain; primaryType: "Order"; message: OrderMessage }>("typed_data"),
    signatureDeadline: ts("signature_deadline"),
    /** While pending_approval: when it expires unless a person approves or rejects it first. */
    approvalDeadline: ts("approval_deadline"),
    venueOrderId: text("venue_order_id"),
    filledUnits: units("filled_units").notNull().default(sql`0`),
    flaggedForReview: boolean("flagged_for_review").notNull().default(false),
    /**
     * When a client's cancel of this open or unknown order was sent to the venue (written before the
     * call); cleared when the venue is known not to have cancelled it. Reconciliation reads the venue
     * for `open` orders that carry it, so a crash between the venue's cancel and the row's update does
     * not leave the order open (docs/decisions.md, "Client cancels recorded before the venue call").
     * Never shown by the API; on an order that ended it is only a record.
     */
    cancelRequestedAt: ts("cancel_requested_at"),
    clientOrderId: text("client_order_id"),
    decisionId: text("decision_id"),
    /**
     * The approving risk decision's intent. An approval has no risk_decisions row of its own: its id
     * is decision_id, its time created_at, its failures and checks empty, its order this row (the
     * read paths of src/modules/decisions merge these with the stored rejections). Null on orders
     * stored before this column, whose approvals are rows of risk_decisions.
     */
    decisionIntent: jsonText<Record<string, unknown>>("decision_intent"),
    /** UTC day (YYYY-MM-DD) the notional counts against. */
    tradingDay: text("trading_day").notNull(),
    history: jsonText<OrderHistoryEntry[]>("history").notNull(),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  /*
   * No index covers a column a delegated placement's status write changes (status, venue_order_id,
   * history, updated_at, filled_units), in its key or its predicate: that write is a HOT update, which
   * writes no index entry (migration 0024, docs/decisions.md "Delegated placements as HOT updates"). The
   * queries by status and by the venue's id go through two stored generated columns of the migration,
   * left out of this model (no row the service reads or writes carries them), which that write leaves
   * as they are: ORDER_WATCH and ORDER_VENUE_REF.
   */
  (t) => [
    index("orders_agent_idx").on(t.agentId, t.createdAt),
    index("orders_org_idx").on(t.orgId, t.createdAt),
    // What the service watches an order for, then its deadlines: the expiry sweeps read only the expired
    // entries of orders awaiting a signature, and every order pending approval (as by status before);
    // reconciliation, the paper venue's resting orders and GTD expiry the orders at the venue.
    index("orders_watch_idx").on(ORDER_WATCH, t.signatureDeadline, t.approvalDeadline).where(sql`${ORDER_WATCH} is not null`),
    // A source of the venue's truth names an order by its EIP-712 hash or the venue's id (the venue
    // report sink): the hash's index finds it by an id that is its hash (Polymarket's), this one by any
    // other; both are null until placement, so they cost the hot insert nothing.
    index("orders_order_hash_idx").on(t.orderHash),
    index("orders_venue_ref_idx").on(ORDER_VENUE_REF).where(sql`${ORDER_VENUE_REF} is not null`),
    // The GTD expiry job's read, every second (src/db/due-gtd-orders.ts): only payload GTD orders at the
    // venue, by their expiration as a number (migration 0025), not every order at the venue. Its
    // predicate names ORDER_WATCH, not the status, so a placement stays a HOT update.
    index("orders_gtd_due_idx")
      .on(sql`(CASE WHEN ${t.expiration} ~ '^[0-9]{1,15}$' THEN ${t.expiration}::bigint END)`, t.id)
      .where(sql`${ORDER_WATCH} = 'venue' AND ${t.mode} = 'payload' AND ${t.orderType} = 'GTD'`),
  ],
);

/** A fill's state as the venue reports it (src/domain/venue-report.ts); `failed` ones are taken back and count for nothing. */
export type FillRowStatus = FillStatus;

/**
 * Fills of orders as the sources of the venue's truth report them (docs/api.md#fills-and-the-venues-truth). One row per
 * fill of one order, whoever reports it and however often: keyed by `fill_key` (`trade:<id>` or
 * `tx:<hash>:<log index>`) and matched across sources by the trade id or the transaction hash and
 * log index a report carries. Amounts are 6-decimal base units.
 */
export const fills = pgTable(
  "fills",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    orderId: text("order_id").notNull(),
    agentId: text("agent_id").notNull(),
    orgId: text("org_id").notNull(),
    /** The outcome token (the order's market_id). */
    tokenId: text("token_id").notNull(),
    conditionId: text("condition_id").notNull(),
    side: text("side").$type<"buy" | "sell">().notNull(),
    fillKey: text("fill_key").notNull(),
    tradeId: text("trade_id"),
    txHash: text("tx_hash"),
    logIndex: integer("log_index"),
    blockNumber: bigint("block_number", { mode: "bigint" }),
    /** The source that reported it first. */
    source: text("source").notNull(),
    /** Every source that reported it. */
    sources: jsonb("sources").$type<string[]>().notNull().default([]),
    price: text("price").notNull(),
    sharesUnits: units("shares_units").notNull(),
    usdcUnits: units("usdc_units").notNull(),
    feeUnits: units("fee_units").notNull().default(sql`0`),
    status: text("status").$type<FillRowStatus>().notNull(),
    /**
     * A fill known from a placement's answer (source `rest`): the trades and transactions that answer
     * named (`trade:<id>`, `tx:<hash>`; empty when it named none). Its amounts are what the sources'
     * own reports of those trades have not yet accounted for (docs/decisions.md, "Placement answers
     * as fills"). Null for every other fill.
     */
    covers: jsonb("covers").$type<string[]>(),
    /** A placement answer's row: the shares and USDC the answer said matched (its own amounts are what is left of them; migration 0023). */
    placedSharesUnits: units("placed_shares_units"),
    placedUsdcUnits: units("placed_usdc_units"),
    /**
     * Set when this row is another source's report of the trade another row counts (that row's id): it
     * counts for nothing then (src/domain/fill-links.ts; migration 0023). Null on every counted row.
     */
    twinOf: bigint("twin_of", { mode: "number" }),
    /** When the trade happened, as the source says. */
    at: ts("at").notNull(),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("fills_order_key_idx").on(t.orderId, t.fillKey),
    uniqueIndex("fills_order_trade_idx").on(t.orderId, t.tradeId).where(sql`${t.tradeId} is not null`),
    uniqueIndex("fills_order_tx_idx").on(t.orderId, t.txHash, t.logIndex).where(sql`${t.txHash} is not null`),
    index("fills_agent_idx").on(t.agentId, t.id),
  ],
);

export const riskDecisions = pgTable(
  "risk_decisions",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    agentId: text("agent_id").notNull(),
    approved: boolean("approved").notNull(),
    intent: jsonb("intent").$type<Record<string, unknown>>().notNull(),
    failures: jsonb("failures").$type<unknown[]>().notNull(),
    checks: jsonb("checks").$type<unknown[]>().notNull(),
    orderId: text("order_id"),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [index("risk_decisions_agent_idx").on(t.agentId, t.createdAt), index("risk_decisions_org_idx").on(t.orgId, t.createdAt)],
);

/**
 * One row per kill, written when the kill starts (before any venue call; `completed_at` null) and
 * completed at its end: a row still without `completed_at` at start-up is a kill a crash interrupted,
 * run again then (KillService.resumeUnfinished).
 */
export const kills = pgTable(
  "kills",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    agentId: text("agent_id").notNull(),
    reason: text("reason"),
    /** The breaker reason the kill trips (`kill` or `heartbeat`), so a resumed kill trips the same; null on rows older than it. */
    breakerReason: text("breaker_reason").$type<"kill" | "heartbeat">(),
    startedAt: ts("started_at").notNull(),
    completedAt: ts("completed_at"),
    cancelled: jsonb("cancelled").$type<string[]>().notNull(),
    /** Orders that had already matched at the venue when the kill reached them. */
    filled: jsonb("filled").$type<string[]>().notNull().default([]),
    failed: jsonb("failed").$type<string[]>().notNull(),
    credentialsDeleted: boolean("credentials_deleted").notNull().default(false),
  },
  (t) => [index("kills_unfinished_idx").on(t.startedAt).where(sql`${t.completedAt} is null`)],
);

/** Replays of POST answers per caller and Idempotency-Key, for 24 hours. */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    status: integer("status").notNull(),
    body: text("body").notNull(),
    contentType: text("content_type").notNull(),
    createdAt: ts("created_at").notNull(),
    /**
     * The id body (20 characters after the prefix) the request's new resources take (`ord_…`,
     * `agt_…`), chosen before the request runs: after a crash, whether the request created its
     * resource is a lookup (src/http/idempotency-recovery.ts).
     */
    reservedId: text("reserved_id"),
    /** The instance (INSTANCE_ID) that claimed the key: only a dead instance's records in progress are interrupted. */
    owner: text("owner"),
    /**
     * The run holding the record (a token written by the claim and by each resume): the run's later
     * writes of the record are conditional on it (migration 0022, src/db/idempotency-store.ts).
     */
    run: text("run"),
    /**
     * The life of the owner the run belongs to (its `service_instances.started_at` when it claimed or
     * resumed the record): a record of an owner's earlier life is a dead run's.
     */
    ownerLife: ts("owner_life"),
  },
  (t) => [
    primaryKey({ columns: [t.scope, t.key] }),
    index("idempotency_created_idx").on(t.createdAt),
    index("idempotency_in_progress_idx").on(t.owner).where(sql`${t.status} = 0`),
  ],
);

/**
 * x402: a paying wallet's identity (issue 13). Each wallet gets one agent inside an organization of
 * its own that has no API keys, so organization keys never reach it and it reaches nothing else.
 * The primary key makes the first paid requests of one wallet agree on one agent.
 */
export const x402Wallets = pgTable("x402_wallets", {
  payer: text("payer").primaryKey(),
  orgId: text("org_id").notNull(),
  agentId: text("agent_id").notNull(),
  createdAt: ts("created_at").notNull().defaultNow(),
});

export type PaymentStatus = "verified" | "settled" | "failed";

/**
 * x402 payments: one row per EIP-3009 authorization, inserted (reserving its nonce) before the
 * paid request's handler runs. The unique index is the replay guard across restarts and processes.
 */
export const payments = pgTable(
  "payments",
  {
    id: text("id").primaryKey(),
    payer: text("payer").notNull(),
    agentId: text("agent_id"),
    /** Whether this payment's request created the agent (a failed one then removes it). */
    createdAgent: boolean("created_agent").notNull().default(false),
    x402Version: integer("x402_version").notNull(),
    network: text("network").notNull(),
    asset: text("asset").notNull(),
    payTo: text("pay_to").notNull(),
    amountUnits: units("amount_units").notNull(),
    nonce: text("nonce").notNull(),
    validAfter: text("valid_after").notNull(),
    validBefore: text("valid_before").notNull(),
    /** The signed authorization as received, kept for settlement (the local verifier settles later). */
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    status: text("status").$type<PaymentStatus>().notNull(),
    failureReason: text("failure_reason"),
    transaction: text("transaction"),
    method: text("method").notNull(),
    path: text("path").notNull(),
    responseStatus: integer("response_status"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("payments_nonce_idx").on(t.network, t.asset, t.payer, t.nonce),
    index("payments_agent_idx").on(t.agentId, t.createdAt),
    index("payments_created_idx").on(t.createdAt),
  ],
);

/** Every type of the event log (docs/events.md); `webhook_disabled` is an organization's event (no agent). */
export const EVENT_TYPES = ["order", "risk_rejected", "breaker", "kill", "webhook_disabled"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The event log (docs/events.md): one row per status change the stream reports, written in the same
 * transaction as the change itself. `id` orders the stream and is the SSE `id:`. Pruned after
 * EVENTS_RETENTION_H hours. The `order` event of a new order stores no `data`, only `order_id`: its
 * data (the order as it was created) is rendered from the order row when the stream reads it
 * (event-log.ts), so the hot insert does not write the order twice; a delegated placement's `order`
 * event likewise (`orderStep`, migration 0026).
 */
export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    orgId: text("org_id").notNull(),
    /** Null for an organization's own event (`webhook_disabled`), which agent-scoped streams do not see. */
    agentId: text("agent_id"),
    type: text("type").$type<EventType>().notNull(),
    /** Null only for a new order's `order` event (`order_id` set). */
    data: jsonb("data").$type<Record<string, unknown>>(),
    /**
     * The order of an `order` event without `data`: a new order's (rendered as it was created) or, with
     * `orderStep`, a delegated placement's (rendered as the placement left it, event-log.ts).
     */
    orderId: text("order_id"),
    createdAt: ts("created_at").notNull().defaultNow(),
    /**
     * A placement's `order` event without `data` (migration 0026): how many entries of the order's
     * history it shows (the placement's is the last), and the venue's id and the filled amount the
     * placement wrote; everything else of the order as the placement left it is the row's own (its
     * history only grows, its other columns in the order view never change after the placement).
     */
    orderStep: integer("order_step"),
    orderVenueId: text("order_venue_id"),
    orderFilledUnits: units("order_filled_units"),
  },
  (t) => [index("events_agent_idx").on(t.agentId, t.id), index("events_org_idx").on(t.orgId, t.id), index("events_created_idx").on(t.createdAt)],
);

/**
 * The chain source's block cursor (src/chain/, docs/decisions.md "Fills from the chain"): one row per
 * followed stream. `pending` holds the fills reported `mined` and not yet confirmed, as JSON
 * ({fillKey, orderHash, maker, blockNumber (decimal text), blockHash}).
 */
export const chainCursor = pgTable("chain_cursor", {
  id: text("id").primaryKey(),
  blockNumber: units("block_number").notNull(),
  blockHash: text("block_hash"),
  pending: jsonb("pending").$type<{ fillKey: string; orderHash: string; maker: string; blockNumber: string; blockHash: string }[]>().notNull().default(sql`'[]'::jsonb`),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/**
 * Webhook endpoints of an organization (docs/webhooks.md). `last_event_id` is the endpoint's cursor
 * into the event log: every matching event up to it was delivered (a 2xx answer), so delivery resumes
 * after it at start-up. `secret_sealed` is the signing secret sealed with the credential vault (it must
 * be opened to sign). `attempts` and `next_attempt_at` are the retry state of the event after the cursor.
 */
export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => orgs.id),
    url: text("url").notNull(),
    /** The event types delivered; null for every type (also types added later). */
    eventTypes: jsonb("event_types").$type<EventType[] | null>(),
    /** Only this agent's events when set. */
    agentId: text("agent_id"),
    description: text("description"),
    secretSealed: bytea("secret_sealed").notNull(),
    status: text("status").$type<"enabled" | "disabled">().notNull().default("enabled"),
    lastEventId: bigint("last_event_id", { mode: "number" }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at"),
    lastError: text("last_error"),
    lastSuccessAt: ts("last_success_at"),
    disabledAt: ts("disabled_at"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    index("webhooks_org_idx").on(t.orgId, t.createdAt),
    index("webhooks_enabled_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'enabled'`),
  ],
);

/**
 * One agent's lease (docs/decisions.md "One actor per agent across instances"): the instance whose
 * actor owns the agent, until `expires_at` unless renewed; `epoch` grows by one at every change of
 * owner, and every write for the agent is fenced on the epoch its writer holds (agent_lease_fence in
 * migration 0020). `owner` null: released. Rows named `job:<name>` are the singleton leases of
 * cluster-wide jobs.
 */
export const agentLeases = pgTable("agent_leases", {
  agentId: text("agent_id").primaryKey(),
  owner: text("owner"),
  epoch: bigint("epoch", { mode: "number" }).notNull(),
  expiresAt: ts("expires_at").notNull(),
});

/** The running service instances, each renewed with its leases: an expired one is dead. */
export const serviceInstances = pgTable("service_instances", {
  id: text("id").primaryKey(),
  /** When the instance's current life began: its first registration, and again whenever its row had lapsed. */
  startedAt: ts("started_at").notNull(),
  expiresAt: ts("expires_at").notNull(),
});

/** Settings every instance on the database shares (the seal key's fingerprint). */
export const clusterSettings = pgTable("cluster_settings", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
});
