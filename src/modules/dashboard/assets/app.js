// The dashboard: sign-in, the four views, their actions, and live refresh.
import { ApiError, createApi, session } from "./api.js";
import { intentsChart, volumeChart } from "./charts.js";
import { fmtAge, h, ORDER_STATUSES, replace } from "./dom.js";
import { POLL_MS, startLive } from "./live.js";
import { createWebhooks } from "./webhooks.js";
import { agentCards, agentLabel, approvals, firmControls, keysTable, orderDetail, ordersTable, rejectionsList } from "./views.js";

const $ = (id) => document.getElementById(id);
const VIEWS = ["agents", "orders", "risk", "keys", "webhooks"];

const state = {
  view: "agents",
  agents: [],
  markets: new Map(),
  exposures: new Map(),
  positions: new Map(),
  killResults: new Map(),
  killing: new Set(),
  cancelResults: new Map(),
  cancelling: new Set(),
  /** GET /v1/kill, or null when this key may not see it (an agent-scoped key). */
  firm: null,
  firmBusy: false,
  firmResult: null,
  orders: [],
  selectedOrder: null,
  rendered: new Map(),
  stopLive: null,
  refreshing: null,
  again: false,
};

const api = createApi({ onUnauthorized: () => signOut("The API key is no longer valid (revoked or unknown). Sign in again.") });

// ------------------------------------------------------------------------ names

const agentName = (id) => {
  const a = state.agents.find((x) => x.id === id);
  return a ? agentLabel(a) : id;
};
const marketName = (marketId, conditionId) => {
  const m = (marketId && state.markets.get(marketId)) || [...state.markets.values()].find((x) => x.condition_id === conditionId);
  return m ? `${m.question} (${m.outcome})` : (marketId ?? conditionId ?? "–");
};

// ------------------------------------------------------------------------ errors and dialogs

function showError(error) {
  const el = $("global-error");
  if (!error) {
    el.hidden = true;
    return;
  }
  const p = error instanceof ApiError ? error.problem : {};
  const details = Array.isArray(p.errors) ? p.errors.map((e) => `${e.path}: ${e.message}`).join("; ") : "";
  el.textContent = `⚠ ${error.message}${details && !error.message.includes(details) ? ` (${details})` : ""}`;
  el.hidden = false;
}

function confirmDialog(title, text, okLabel) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-ok").textContent = okLabel;
  dialog.returnValue = "";
  dialog.showModal();
  // The harmless choice has the focus: Enter alone never kills or revokes.
  dialog.querySelector('button[value="cancel"]').focus();
  return new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true }));
}

// ------------------------------------------------------------------------ sign-in

async function signIn(key) {
  const error = $("sign-in-error");
  error.hidden = true;
  try {
    await api.request("GET", "/v1/agents?limit=1", undefined, { key });
  } catch (e) {
    error.textContent = e instanceof ApiError && e.status === 401 ? "⚠ This key is not valid (unknown or revoked)." : `⚠ ${e.message}`;
    error.hidden = false;
    return;
  }
  session.set(key);
  $("api-key").value = "";
  start();
}

function signOut(message) {
  session.clear();
  state.stopLive?.();
  state.stopLive = null;
  state.rendered.clear();
  $("signed-in").hidden = true;
  $("sign-out").hidden = true;
  $("live-status").hidden = true;
  $("sign-in").hidden = false;
  const error = $("sign-in-error");
  error.textContent = message ? `⚠ ${message}` : "";
  error.hidden = !message;
  $("api-key").focus();
}

function start() {
  // Nothing of an earlier sign-in's key is shown for this one (its firm controls, above all).
  state.firm = null;
  state.firmResult = null;
  state.rendered.clear();
  $("firm-controls").replaceChildren();
  $("agents-list").replaceChildren();
  $("sign-in").hidden = true;
  $("signed-in").hidden = false;
  $("sign-out").hidden = false;
  loadMarkets();
  state.stopLive = startLive({
    key: session.get(),
    onEvent(type, data) {
      // The event envelope (docs/events.md): {id, type, agent_id, created_at, data}; a kill's data is the kill answer.
      if (type === "kill" && data?.agent_id && data.data) state.killResults.set(data.agent_id, data.data);
      if (type === "webhook_disabled") webhooks.checkNotice();
      scheduleRefresh();
    },
    onTick: () => refresh(),
    onMode(mode) {
      const el = $("live-status");
      el.hidden = false;
      el.dataset.mode = mode;
      el.textContent =
        mode === "stream"
          ? "● Live: following the event stream"
          : mode === "polling"
            ? `↻ Live: checking every ${POLL_MS / 1000} s`
            : `⚠ Reconnecting to the event stream (checking every ${POLL_MS / 1000} s meanwhile)`;
    },
  });
  route();
}

async function loadMarkets() {
  try {
    const page = await api.markets();
    for (const m of page.data) state.markets.set(m.market_id, m);
    fillSelect($("order-filters").elements.market_id, page.data.map((m) => [m.market_id, `${m.question} (${m.outcome})`]));
    state.rendered.clear();
    refresh();
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) showError(e);
  }
}

// ------------------------------------------------------------------------ routing and refresh

function route() {
  const wanted = location.hash.slice(1);
  state.view = VIEWS.includes(wanted) ? wanted : "agents";
  for (const v of VIEWS) $(`view-${v}`).hidden = v !== state.view;
  for (const a of document.querySelectorAll(".tabs a")) {
    if (a.dataset.view === state.view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  refresh();
}

let refreshTimer = null;
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => refresh(), 150);
}

/** Refreshes the current view; a call while one runs queues one more. */
async function refresh() {
  if (!session.get()) return;
  if (state.refreshing) {
    state.again = true;
    return state.refreshing;
  }
  state.refreshing = (async () => {
    try {
      await LOADERS[state.view]();
      showError(null);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) showError(e);
    }
  })();
  await state.refreshing;
  state.refreshing = null;
  if (state.again) {
    state.again = false;
    await refresh();
  }
}

/** Renders `build()` into `el` only when `data` changed since the last render there. */
function render(el, data, build) {
  const signature = JSON.stringify(data);
  if (state.rendered.get(el.id) === signature) return;
  state.rendered.set(el.id, signature);
  replace(el, build());
}

async function loadAgents() {
  state.agents = (await api.agents()).data;
  return state.agents;
}

const LOADERS = {
  async agents() {
    const agents = await loadAgents();
    try {
      state.firm = await api.firmState();
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 403)) throw e;
      state.firm = null;
    }
    // Webhooks are an organization key's: the disabled-endpoint notice is looked up once per sign-in,
    // and not at all for an agent-scoped key (GET /v1/kill's 403 told).
    if (state.firm && state.noticeCheckedFor !== session.get()) {
      state.noticeCheckedFor = session.get();
      void webhooks.checkNotice();
    }
    await Promise.all(
      agents.map(async (a) => {
        try {
          const [exposure, positions] = await Promise.all([api.exposure(a.id), api.positions(a.id)]);
          state.exposures.set(a.id, exposure);
          state.positions.set(a.id, positions);
        } catch (e) {
          if (!(e instanceof ApiError && e.status === 404)) throw e;
        }
      }),
    );
    renderAgents();
  },
  async orders() {
    await loadAgents();
    fillSelect($("order-filters").elements.agent_id, state.agents.map((a) => [a.id, agentLabel(a)]));
    const f = $("order-filters").elements;
    const page = await api.orders({ agent_id: f.agent_id.value, status: f.status.value });
    state.orders = page.data;
    const shown = state.orders.filter(
      (o) => (!f.market_id.value || o.market_id === f.market_id.value) && (!f.side.value || o.side === f.side.value) && (!f.flagged.checked || o.flagged_for_review),
    );
    const ctx = { agentName, marketName };
    render($("approvals"), state.orders.filter((o) => o.status === "pending_approval"), () =>
      approvals(state.orders, { ...ctx, onApprove: (o) => decide(o, "approve"), onReject: (o) => decide(o, "reject") }),
    );
    render($("orders-table"), [shown, state.selectedOrder], () => ordersTable(shown, { ...ctx, onShow: showOrder, selected: state.selectedOrder }));
    if (state.selectedOrder) await showOrder(state.selectedOrder, false);
  },
  async risk() {
    if (!state.agents.length) await loadAgents();
    const [decisions, summary] = await Promise.all([api.rejections(), api.summary()]);
    render($("chart-intents"), summary.intents, () => intentsChart(summary.intents));
    render($("chart-volume"), summary.daily_volume, () => volumeChart(summary.daily_volume, agentName));
    render($("rejections"), decisions.data, () => rejectionsList(decisions.data, { agentName, marketName }));
  },
  async keys() {
    await loadAgents();
    fillSelect($("issue-key").elements.agent_id, state.agents.map((a) => [a.id, `Agent: ${agentLabel(a)}`]));
    let keys;
    try {
      keys = (await api.keys()).data;
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        render($("keys-table"), "forbidden", () => h("p", { class: "empty" }, "This key is scoped to one agent: it cannot list or issue keys."));
        return;
      }
      throw e;
    }
    const hint = session.get()?.slice(-4);
    render($("keys-table"), keys, () => keysTable(keys, { agentName, onRevoke: revokeKey, currentKeyHint: hint }));
  },
  async webhooks() {
    await loadAgents();
    fillSelect($("register-webhook").elements.agent_id, state.agents.map((a) => [a.id, agentLabel(a)]));
    await webhooks.load();
  },
};

function renderAgents() {
  const el = $("agents-list");
  const firm = $("firm-controls");
  render(firm, [state.firm, state.firmBusy, state.firmResult], () =>
    firmControls(state.firm, { busy: state.firmBusy, result: state.firmResult, onKillAll: killAll, onResumeAll: resumeAll }),
  );
  const data = [state.agents, [...state.exposures], [...state.positions], [...state.killResults], [...state.killing], [...state.cancelResults], [...state.cancelling], state.markets.size];
  render(el, data, () =>
    agentCards(state.agents, {
      exposures: state.exposures,
      positions: state.positions,
      killResults: state.killResults,
      killing: state.killing,
      marketName,
      onKill: killAgent,
      onResume: resumeAgent,
      cancelResults: state.cancelResults,
      cancelling: state.cancelling,
      onCancelAll: cancelAllOrders,
      onEditLimits: editLimits,
      onOrders: (a) => {
        const select = $("order-filters").elements.agent_id;
        fillSelect(select, state.agents.map((x) => [x.id, agentLabel(x)]));
        select.value = a.id;
        state.rendered.delete("orders-table");
        location.hash = "#orders";
      },
    }),
  );
}

/** Sets a select's options after its first (the "all" option), keeping the chosen value. */
function fillSelect(select, options) {
  const chosen = select.value;
  const first = select.options[0];
  const signature = JSON.stringify(options);
  if (select.dataset.signature === signature) return;
  select.dataset.signature = signature;
  select.replaceChildren(first, ...options.map(([value, label]) => h("option", { value }, label)));
  select.value = options.some(([v]) => v === chosen) ? chosen : "";
}

// ------------------------------------------------------------------------ actions

async function killAgent(agent) {
  const ok = await confirmDialog(
    `Kill ${agentLabel(agent)}?`,
    `This trips the agent's breaker at once and cancels all of its open orders (${agent.open_orders}) within the kill deadline. New intents are rejected until you resume it.`,
    "Kill agent",
  );
  if (!ok) return;
  state.killing.add(agent.id);
  state.killResults.delete(agent.id);
  renderAgents();
  try {
    const result = await api.kill(agent.id);
    state.killResults.set(agent.id, result);
  } catch (e) {
    showError(e);
  } finally {
    state.killing.delete(agent.id);
  }
  await refresh();
  renderAgents();
  document.querySelector(`[data-focus="kill-${CSS.escape(agent.id)}"]`)?.focus();
}

async function cancelAllOrders(agent) {
  const ok = await confirmDialog(
    `Cancel all orders of ${agentLabel(agent)}?`,
    `This cancels all of the agent's open orders (${agent.open_orders}) within the kill deadline. The agent is not halted: its breaker stays closed and it can place new orders at once.`,
    "Cancel all orders",
  );
  if (!ok) return;
  state.cancelling.add(agent.id);
  state.cancelResults.delete(agent.id);
  renderAgents();
  try {
    state.cancelResults.set(agent.id, await api.cancelAll(agent.id));
  } catch (e) {
    showError(e);
  } finally {
    state.cancelling.delete(agent.id);
  }
  await refresh();
  renderAgents();
  document.querySelector(`[data-focus="cancel-all-${CSS.escape(agent.id)}"]`)?.focus();
}

async function killAll() {
  const ok = await confirmDialog(
    "Kill all agents?",
    `This kills every agent of the organization (${state.agents.length}) at once: breakers tripped, open orders cancelled within the deadline, delegated credentials deleted. Agents created afterwards start halted. Everything stays halted until "Resume all".`,
    "Kill all agents",
  );
  if (!ok) return;
  state.firmBusy = true;
  state.firmResult = null;
  renderAgents();
  try {
    state.firmResult = await api.killAll(state.firm.org_id);
  } catch (e) {
    showError(e);
  } finally {
    state.firmBusy = false;
  }
  await refresh();
  renderAgents();
  document.querySelector('[data-focus="kill-all"]')?.focus();
}

async function resumeAll() {
  try {
    await api.resumeAll(state.firm.org_id);
    state.firmResult = null;
    state.killResults.clear();
  } catch (e) {
    showError(e);
  }
  await refresh();
}

async function resumeAgent(agent) {
  try {
    await api.resume(agent.id);
    state.killResults.delete(agent.id);
  } catch (e) {
    showError(e);
  }
  await refresh();
}

async function decide(order, action) {
  try {
    await (action === "approve" ? api.approve(order.id) : api.reject(order.id));
  } catch (e) {
    showError(e);
  }
  await refresh();
}

async function showOrder(id, focus = true) {
  state.selectedOrder = id;
  const panel = $("order-detail");
  try {
    const order = await api.order(id);
    render(panel, order, () => [
      ...orderDetail(order, { agentName, marketName }),
      h("button", { type: "button", class: "secondary", onclick: closeOrder, dataset: { focus: "close-order" } }, "Close"),
    ]);
    panel.hidden = false;
    if (focus) {
      panel.setAttribute("tabindex", "-1");
      panel.focus();
    }
  } catch (e) {
    showError(e);
  }
}

function closeOrder() {
  const id = state.selectedOrder;
  state.selectedOrder = null;
  $("order-detail").hidden = true;
  state.rendered.delete("order-detail");
  refresh().then(() => document.querySelector(`[data-focus="show-${CSS.escape(id)}"]`)?.focus());
}

function editLimits(agent) {
  const dialog = $("limits");
  $("limits-title").textContent = `Edit limits of ${agentLabel(agent)}`;
  $("limits-error").hidden = true;
  const fields = Object.entries(agent.limits).map(([name, value]) => {
    const list = Array.isArray(value);
    const input = h("input", {
      name,
      id: `limit-${name}`,
      type: "text",
      inputmode: list ? undefined : "decimal",
      value: list ? value.join(", ") : value === null ? "" : String(value),
      dataset: { kind: list ? "list" : value === null || name.endsWith("_threshold_usdc") ? "nullable" : "number", initial: list ? value.join(", ") : String(value ?? "") },
      "aria-describedby": list ? `limit-${name}-hint` : undefined,
    });
    return h(
      "div",
      { class: "field" },
      h("label", { for: `limit-${name}` }, name.replaceAll("_", " ")),
      input,
      list ? h("small", { id: `limit-${name}-hint`, class: "muted" }, "comma-separated") : "",
    );
  });
  replace($("limits-fields"), fields);
  dialog.dataset.agentId = agent.id;
  dialog.showModal();
}

async function saveLimits(event) {
  event.preventDefault();
  const dialog = $("limits");
  const patch = {};
  for (const input of $("limits-fields").querySelectorAll("input")) {
    if (input.value.trim() === input.dataset.initial) continue;
    const raw = input.value.trim();
    if (input.dataset.kind === "list") patch[input.name] = raw ? raw.split(",").map((s) => s.trim()).filter(Boolean) : [];
    else if (input.dataset.kind === "nullable" && raw === "") patch[input.name] = null;
    else patch[input.name] = raw === "" || Number.isNaN(Number(raw)) ? raw : Number(raw);
  }
  if (!Object.keys(patch).length) {
    dialog.close();
    return;
  }
  try {
    await api.patchLimits(dialog.dataset.agentId, patch);
    dialog.close();
    await refresh();
  } catch (e) {
    const el = $("limits-error");
    const errors = e instanceof ApiError && Array.isArray(e.problem.errors) ? e.problem.errors.map((x) => `${x.path}: ${x.message}`).join("; ") : "";
    el.textContent = `⚠ ${errors || e.message}`;
    el.hidden = false;
  }
}

async function issueKey(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const body = {};
  if (form.elements.name.value.trim()) body.name = form.elements.name.value.trim();
  if (form.elements.agent_id.value) body.agent_id = form.elements.agent_id.value;
  try {
    const issued = await api.issueKey(body);
    form.reset();
    showNewKey(issued);
    await refresh();
  } catch (e) {
    showError(e);
  }
}

function showNewKey(issued) {
  const panel = $("new-key");
  const field = h("input", { id: "new-key-value", readonly: true, value: issued.key, "aria-label": "The new API key", spellcheck: "false" });
  const copied = h("span", { role: "status", class: "muted" });
  const copy = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(issued.key);
          copied.textContent = " ✔ Copied";
        } catch {
          field.select();
          copied.textContent = " Selected: press Ctrl+C (⌘C) to copy";
        }
      },
    },
    "Copy key",
  );
  replace(
    panel,
    h("h3", {}, `New key${issued.name ? ` “${issued.name}”` : ""}`),
    h("p", {}, "⚠ Copy it now: it is shown only this once. The service keeps only its hash."),
    h("div", { class: "copy-row" }, field, copy, copied),
    h("button", { type: "button", class: "secondary", onclick: () => { replace(panel); panel.hidden = true; } }, "Done, hide it"),
  );
  panel.hidden = false;
  copy.focus();
}

async function revokeKey(key) {
  const mine = key.hint === session.get()?.slice(-4);
  const ok = await confirmDialog(
    `Revoke key ${key.name ?? `…${key.hint}`}?`,
    `Requests with this key will be refused from now on.${mine ? " It looks like the key this session signed in with: you will be signed out." : ""}`,
    "Revoke key",
  );
  if (!ok) return;
  try {
    await api.revokeKey(key.id);
  } catch (e) {
    showError(e);
  }
  await refresh();
}

// ------------------------------------------------------------------------ webhooks (webhooks.js)

const webhooks = createWebhooks({ api, confirmDialog, showError, refresh: () => refresh(), agentName });

// ------------------------------------------------------------------------ wiring

function init() {
  fillSelect($("order-filters").elements.status, ORDER_STATUSES.map((s) => [s, s.replaceAll("_", " ")]));
  $("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("api-key").value.trim();
    if (key) signIn(key);
  });
  $("sign-out").addEventListener("click", () => signOut());
  $("order-filters").addEventListener("change", () => {
    state.rendered.delete("orders-table");
    refresh();
  });
  $("order-filters").addEventListener("submit", (event) => event.preventDefault());
  $("issue-key").addEventListener("submit", issueKey);
  $("register-webhook").addEventListener("submit", webhooks.register);
  $("limits-form").addEventListener("submit", saveLimits);
  $("limits-cancel").addEventListener("click", () => $("limits").close());
  window.addEventListener("hashchange", route);
  // Ages in the orders table move on between refreshes.
  setInterval(() => {
    for (const cell of document.querySelectorAll("td[data-age]")) cell.textContent = fmtAge(cell.dataset.age);
  }, 15_000);
  if (session.get()) start();
  else signOut();
}

init();
