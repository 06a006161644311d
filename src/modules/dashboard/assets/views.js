// What each view shows, built from API answers. Actions are callbacks the app passes in.
import { breakerBadge, empty, flaggedBadge, fmtAge, fmtNumber, fmtTime, fmtUsdc, h, shortId, statusBadge } from "./dom.js";

export const agentLabel = (agent) => agent?.name || shortId(agent?.id);

// ------------------------------------------------------------------------ agents

function volumeBar(dv) {
  const pct = dv.limit_usdc > 0 ? Math.min(100, (dv.used_usdc / dv.limit_usdc) * 100) : 0;
  const text = `${fmtUsdc(dv.used_usdc)} of ${fmtUsdc(dv.limit_usdc)} (${pct.toFixed(0)} %)`;
  return h(
    "div",
    { class: "volume" },
    h("span", { class: "label" }, "Daily volume"),
    h("meter", { min: 0, max: dv.limit_usdc || 1, low: (dv.limit_usdc || 1) * 0.75, high: (dv.limit_usdc || 1) * 0.9, optimum: 0, value: dv.used_usdc, "aria-label": `Daily volume: ${text}` }),
    h("span", { class: "value" }, text),
  );
}

function exposureList(exposure, marketName) {
  if (!exposure) return h("p", { class: "muted" }, "Exposure: loading…");
  if (!exposure.data.length) return h("p", { class: "muted" }, "No exposure in any market.");
  return h(
    "table",
    { class: "mini" },
    h("caption", {}, `Exposure per market (limit ${fmtUsdc(exposure.limit_usdc)} each)`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Market"), h("th", { scope: "col", class: "num" }, "Exposure"))),
    h(
      "tbody",
      {},
      exposure.data.map((e) => {
        const over = e.exposure_usdc > exposure.limit_usdc;
        return h(
          "tr",
          {},
          h("td", {}, marketName(e.market_ids[0], e.condition_id)),
          h("td", { class: "num" }, fmtUsdc(e.exposure_usdc), over ? h("span", { class: "badge bad" }, " ⚠ over limit") : ""),
        );
      }),
    ),
  );
}

/** The agent's positions per outcome token, from its fills (GET /v1/agents/{id}/positions; amounts are decimal strings). */
function positionsList(positions, marketName) {
  if (!positions) return h("p", { class: "muted" }, "Positions: loading…");
  const held = positions.positions.filter((p) => p.shares !== "0" || p.realized_pnl_usdc !== "0");
  if (!held.length) return h("p", { class: "muted", dataset: { testid: "positions" } }, "No positions.");
  const pnl = (v) => (v === null ? "—" : h("span", { class: v.startsWith("-") ? "pnl neg" : "pnl" }, v));
  return h(
    "div",
    { class: "scroll-x" },
    h(
    "table",
    { class: "mini", dataset: { testid: "positions" } },
    h("caption", {}, "Positions (from fills)"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Outcome"),
        h("th", { scope: "col", class: "num" }, "Shares"),
        h("th", { scope: "col", class: "num" }, "Avg price"),
        h("th", { scope: "col", class: "num" }, "Mark"),
        h("th", { scope: "col", class: "num" }, "Realized"),
        h("th", { scope: "col", class: "num" }, "Unrealized"),
      ),
    ),
    h(
      "tbody",
      {},
      held.map((p) =>
        h(
          "tr",
          {},
          h("td", {}, marketName(p.token_id, p.condition_id)),
          h("td", { class: "num" }, p.shares),
          h("td", { class: "num" }, p.avg_price),
          h("td", { class: "num" }, p.mark_price ?? "—"),
          h("td", { class: "num" }, pnl(p.realized_pnl_usdc)),
          h("td", { class: "num" }, pnl(p.unrealized_pnl_usdc)),
        ),
      ),
    ),
    ),
  );
}

function killResult(result) {
  const flagged = result.failed.length;
  return h(
    "div",
    { class: `kill-result ${flagged ? "bad" : "ok"}`, role: "status", dataset: { testid: "kill-result" } },
    h("strong", {}, `Kill finished in ${result.duration_ms} ms: `),
    `${result.cancelled.length} cancelled, ${(result.filled ?? []).length} already filled, ${flagged} failed`,
    flagged ? [" ", flaggedBadge()] : "",
    result.credentials_deleted ? " · delegated credentials deleted" : "",
    result.failed.length ? h("p", {}, "Failed and flagged: ", result.failed.map((id) => h("code", {}, id, " "))) : "",
    result.cancelled.length ? h("p", {}, "Cancelled: ", result.cancelled.map((id) => h("code", {}, id, " "))) : "",
  );
}

/** The dead-man switch, when the agent has one (docs/api.md#heartbeat-dead-man-switch: heartbeat {interval_s, last_at, deadline_at}). */
function heartbeatText(hb) {
  const last = hb.last_at ? `last beat ${fmtAge(hb.last_at)} ago` : "no beat yet";
  const due = hb.deadline_at ? `, due by ${fmtTime(hb.deadline_at)}` : "";
  return `every ${hb.interval_s} s, ${last}${due}`;
}

/** A cancel-all's answer: the agent keeps trading. */
function cancelAllResult(result) {
  const flagged = result.failed.length;
  return h(
    "div",
    { class: `kill-result ${flagged ? "bad" : "ok"}`, role: "status", dataset: { testid: "cancel-all-result" } },
    h("strong", {}, `Cancel-all finished in ${result.duration_ms} ms: `),
    `${result.cancelled.length} cancelled, ${result.filled.length} already filled, ${flagged} failed`,
    flagged ? [" ", flaggedBadge()] : "",
    " · the agent keeps trading",
  );
}

export function agentCards(agents, { exposures, positions = new Map(), killResults, killing, marketName, onKill, onResume, onEditLimits, onOrders, cancelResults = new Map(), cancelling = new Set(), onCancelAll = () => {} }) {
  if (!agents.length) return [empty("No agents yet. Create one with POST /v1/agents; it will appear here.")];
  return agents.map((a) => {
    const tripped = a.breaker.state === "tripped";
    return h(
      "article",
      { class: `card ${tripped ? "tripped" : ""}`, "aria-labelledby": `agent-${a.id}`, dataset: { agentId: a.id } },
      h("header", {}, h("h3", { id: `agent-${a.id}` }, agentLabel(a)), h("code", { class: "muted" }, a.id)),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Mode"),
        h("dd", {}, h("span", { class: "badge info" }, a.mode === "delegated" ? "⇄ delegated" : "✎ payload")),
        h("dt", {}, "Breaker"),
        h("dd", {}, breakerBadge(a.breaker), a.breaker.since && tripped ? h("span", { class: "muted" }, ` since ${fmtTime(a.breaker.since)}`) : ""),
        h("dt", {}, "Open orders"),
        h("dd", { class: "open-orders" }, String(a.open_orders)),
        a.heartbeat ? [h("dt", {}, "Heartbeat"), h("dd", {}, heartbeatText(a.heartbeat))] : "",
      ),
      volumeBar(a.daily_volume),
      exposureList(exposures.get(a.id), marketName),
      positionsList(positions.get(a.id), marketName),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "danger", disabled: killing.has(a.id), onclick: () => onKill(a), dataset: { focus: `kill-${a.id}` } }, killing.has(a.id) ? "Killing…" : "■ Kill"),
        h(
          "button",
          { type: "button", class: "secondary", disabled: cancelling.has(a.id) || a.open_orders === 0, onclick: () => onCancelAll(a), dataset: { focus: `cancel-all-${a.id}` } },
          cancelling.has(a.id) ? "Cancelling…" : "✕ Cancel all orders",
        ),
        tripped ? h("button", { type: "button", onclick: () => onResume(a), dataset: { focus: `resume-${a.id}` } }, "▶ Resume") : "",
        h("button", { type: "button", class: "secondary", onclick: () => onEditLimits(a), dataset: { focus: `limits-${a.id}` } }, "Edit limits"),
        h("button", { type: "button", class: "secondary", onclick: () => onOrders(a), dataset: { focus: `orders-${a.id}` } }, "Orders →"),
      ),
      killResults.has(a.id) ? killResult(killResults.get(a.id)) : "",
      cancelResults.has(a.id) ? cancelAllResult(cancelResults.get(a.id)) : "",
    );
  });
}

/** The firm-wide kill's control (an organization key only; `firm` null hides it). */
export function firmControls(firm, { busy, result, onKillAll, onResumeAll }) {
  if (!firm) return [];
  const failed = result ? result.agents.reduce((n, a) => n + a.failed.length, 0) : 0;
  return [
    h(
      "div",
      { class: `firm-bar ${firm.halted ? "tripped" : ""}`, dataset: { testid: "firm-controls" } },
      firm.halted
        ? h("span", { class: "badge bad" }, `■ All agents halted since ${fmtTime(firm.halted_at)}; new agents start halted`)
        : h("span", { class: "muted" }, "Firm-wide kill: stops every agent of the organization at once."),
      " ",
      h("button", { type: "button", class: "danger", disabled: busy, onclick: onKillAll, dataset: { focus: "kill-all" } }, busy ? "Killing all…" : "■ Kill all"),
      firm.halted ? h("button", { type: "button", disabled: busy, onclick: onResumeAll, dataset: { focus: "resume-all" } }, "▶ Resume all") : "",
    ),
    result
      ? h(
          "div",
          { class: `kill-result ${failed ? "bad" : "ok"}`, role: "status", dataset: { testid: "kill-all-result" } },
          h("strong", {}, `Kill all finished in ${result.duration_ms} ms: `),
          `${result.agents.length} agent(s) halted, ${result.agents.reduce((n, a) => n + a.cancelled.length, 0)} orders cancelled, ${failed} failed`,
          failed ? [" ", flaggedBadge()] : "",
        )
      : "",
  ];
}

// ------------------------------------------------------------------------ orders

export function ordersTable(orders, { agentName, marketName, onShow, selected }) {
  if (!orders.length) return empty("No orders match these filters.");
  const now = Date.now();
  return h(
    "table",
    { class: "data" },
    h("caption", { class: "sr-only" }, "Orders, newest first"),
    h(
      "thead",
      {},
      h("tr", {}, ["Age", "Agent", "Status", "Market", "Side", "Size", "Price", "Venue order id", ""].map((c) => h("th", { scope: "col" }, c))),
    ),
    h(
      "tbody",
      {},
      orders.map((o) =>
        h(
          "tr",
          { class: `${o.flagged_for_review ? "flagged" : ""} ${o.id === selected ? "selected" : ""}`, dataset: { orderId: o.id } },
          h("td", { title: fmtTime(o.created_at), dataset: { age: o.created_at } }, fmtAge(o.created_at, now)),
          h("td", {}, agentName(o.agent_id)),
          h("td", {}, statusBadge(o.status), o.flagged_for_review ? [" ", flaggedBadge()] : ""),
          h("td", {}, marketName(o.market_id)),
          h("td", {}, o.side),
          h("td", { class: "num" }, fmtUsdc(o.size_usdc)),
          h("td", { class: "num" }, fmtNumber(o.price)),
          h("td", {}, o.venue_order_id ? h("code", { title: o.venue_order_id }, shortId(o.venue_order_id)) : "–"),
          h("td", {}, h("button", { type: "button", class: "link", onclick: () => onShow(o.id), dataset: { focus: `show-${o.id}` } }, "History")),
        ),
      ),
    ),
  );
}

export function orderDetail(o, { agentName, marketName }) {
  return [
    h("h3", {}, `Order ${o.id}`),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Status"),
      h("dd", {}, statusBadge(o.status), o.flagged_for_review ? [" ", flaggedBadge()] : ""),
      h("dt", {}, "Agent"),
      h("dd", {}, agentName(o.agent_id)),
      h("dt", {}, "Market"),
      h("dd", {}, marketName(o.market_id)),
      h("dt", {}, "Order"),
      h("dd", {}, `${o.side} ${fmtUsdc(o.size_usdc)} at ${o.price} (${o.order_type}), filled ${fmtUsdc(o.filled_usdc)}`),
      h("dt", {}, "Venue order id"),
      h("dd", {}, o.venue_order_id ? h("code", { class: "wrap" }, o.venue_order_id) : "–"),
    ),
    h("h4", {}, "Status history"),
    h(
      "ol",
      { class: "history" },
      o.history.map((e) => h("li", {}, h("time", { datetime: e.at }, fmtTime(e.at)), " ", statusBadge(e.status), e.reason ? h("span", { class: "muted" }, ` ${e.reason}`) : "")),
    ),
  ];
}

export function approvals(orders, { agentName, marketName, onApprove, onReject }) {
  const waiting = orders.filter((o) => o.status === "pending_approval");
  if (!waiting.length) return [];
  return h(
    "section",
    { class: "panel notice", "aria-labelledby": "approvals-title" },
    h("h3", { id: "approvals-title" }, `Waiting for approval (${waiting.length})`),
    h(
      "ul",
      { class: "plain" },
      waiting.map((o) =>
        h(
          "li",
          {},
          `${agentName(o.agent_id)}: ${o.side} ${fmtUsdc(o.size_usdc)} at ${o.price} on ${marketName(o.market_id)} `,
          h("button", { type: "button", onclick: () => onApprove(o), dataset: { focus: `approve-${o.id}` } }, "✔ Approve"),
          " ",
          h("button", { type: "button", class: "danger", onclick: () => onReject(o), dataset: { focus: `reject-${o.id}` } }, "✖ Reject"),
        ),
      ),
    ),
  );
}

// ------------------------------------------------------------------------ risk

export function rejectionsList(decisions, { agentName, marketName }) {
  if (!decisions.length) return empty("No rejected intents. Every intent so far passed the eight checks.");
  return h(
    "div",
    { class: "rejections" },
    decisions.map((d) =>
      h(
        "article",
        { class: "rejection", dataset: { decisionId: d.id } },
        h(
          "header",
          {},
          h("span", { class: "badge bad" }, h("span", { "aria-hidden": "true" }, "⊘"), " rejected"),
          " ",
          h("strong", {}, agentName(d.agent_id)),
          `: ${d.intent.side} ${fmtUsdc(d.intent.size_usdc)} at ${d.intent.price} on ${marketName(d.intent.market_id)}`,
          h("time", { class: "muted", datetime: d.created_at }, ` · ${fmtTime(d.created_at)}`),
        ),
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "data failures" },
            h("caption", { class: "sr-only" }, `Failed checks of decision ${d.id}`),
            h("thead", {}, h("tr", {}, ["Check", "Code", "Limit", "Actual", "Message"].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              d.failures.map((f) =>
                h("tr", {}, h("td", {}, f.check), h("td", {}, h("code", {}, f.code)), h("td", { class: "num" }, fmtNumber(f.limit)), h("td", { class: "num" }, fmtNumber(f.actual)), h("td", {}, f.message)),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

// ------------------------------------------------------------------------ keys

export function keysTable(keys, { agentName, onRevoke, currentKeyHint }) {
  if (!keys.length) return empty("No API keys.");
  return h(
    "table",
    { class: "data" },
    h("caption", { class: "sr-only" }, "API keys"),
    h("thead", {}, h("tr", {}, ["Name", "Key", "Scope", "Created", "Last used", ""].map((c) => h("th", { scope: "col" }, c)))),
    h(
      "tbody",
      {},
      keys.map((k) =>
        h(
          "tr",
          { dataset: { keyId: k.id } },
          h("td", {}, k.name ?? h("span", { class: "muted" }, "(no name)")),
          h("td", {}, h("code", {}, `bk_…${k.hint}`), k.hint === currentKeyHint ? h("span", { class: "badge info" }, " this session") : ""),
          h("td", {}, k.agent_id ? agentName(k.agent_id) : "whole organization"),
          h("td", {}, fmtTime(k.created_at)),
          h("td", {}, k.last_used_at ? fmtTime(k.last_used_at) : h("span", { class: "muted" }, "never")),
          h("td", {}, h("button", { type: "button", class: "danger", onclick: () => onRevoke(k), dataset: { focus: `revoke-${k.id}` } }, "Revoke")),
        ),
      ),
    ),
  );
}
