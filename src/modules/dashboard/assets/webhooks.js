// The Webhooks view (docs/webhooks.md): the organization's endpoints, with test, re-enable and
// delete; the registration form (the signing secret is shown once); and the notice shown on every
// view while an endpoint is disabled.
import { ApiError } from "./api.js";
import { empty, fmtTime, h, replace } from "./dom.js";

const $ = (id) => document.getElementById(id);
export const WEBHOOK_EVENT_TYPES = ["order", "risk_rejected", "breaker", "kill", "webhook_disabled"];

/** The webhook part of the dashboard, on the page's api, confirm dialog, error banner and refresh. */
export function createWebhooks({ api, confirmDialog, showError, refresh, agentName }) {
  const call = {
    list: () => api.request("GET", "/v1/webhooks?limit=200"),
    create: (body) => api.request("POST", "/v1/webhooks", body),
    test: (id) => api.request("POST", `/v1/webhooks/${encodeURIComponent(id)}/test`),
    enable: (id) => api.request("POST", `/v1/webhooks/${encodeURIComponent(id)}/enable`),
    remove: (id) => api.request("DELETE", `/v1/webhooks/${encodeURIComponent(id)}`),
  };
  const lastTest = new Map();

  /** The notice on every view: which endpoints are disabled, and where to re-enable them. */
  function notice(webhooks) {
    const el = $("webhook-notice");
    const disabled = webhooks.filter((w) => w.status === "disabled");
    if (!disabled.length) {
      el.hidden = true;
      replace(el);
      return;
    }
    replace(
      el,
      `⚠ ${disabled.length === 1 ? "A webhook endpoint was" : `${disabled.length} webhook endpoints were`} disabled after ${disabled.length === 1 ? "its" : "their"} retries: `,
      disabled.map((w, i) => [i ? ", " : "", h("code", {}, w.url), w.last_error ? ` (${w.last_error})` : ""]).flat(),
      ". Events wait for them. ",
      h("a", { href: "#webhooks" }, "Re-enable in Webhooks"),
    );
    el.hidden = false;
  }

  /** Reads the endpoints for the notice; quiet for a key that may not list them (agent-scoped). */
  async function checkNotice() {
    try {
      notice((await call.list()).data);
    } catch (e) {
      if (!(e instanceof ApiError && (e.status === 403 || e.status === 401))) showError(e);
    }
  }

  function table(webhooks) {
    if (!webhooks.length) return empty("No webhook endpoints. Register one above: every matching event is POSTed to it, signed.");
    return h(
      "table",
      { class: "data" },
      h("caption", { class: "sr-only" }, "Webhook endpoints"),
      h("thead", {}, h("tr", {}, ["URL", "Events", "Status", "Delivered up to", "Last success", ""].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        {},
        webhooks.map((w) => {
          const tested = lastTest.get(w.id);
          return h(
            "tr",
            { dataset: { webhookId: w.id } },
            h("td", {}, h("code", {}, w.url), w.description ? h("div", { class: "muted" }, w.description) : ""),
            h("td", {}, w.event_types ? w.event_types.join(", ") : "all", w.agent_id ? h("div", { class: "muted" }, `agent ${agentName(w.agent_id)}`) : ""),
            h(
              "td",
              {},
              w.status === "enabled"
                ? h("span", { class: `badge ${w.attempts ? "warn" : "ok"}` }, w.attempts ? `retrying (${w.attempts} failed)` : "enabled")
                : h("span", { class: "badge bad" }, "disabled"),
              w.last_error ? h("div", { class: "muted" }, w.last_error) : "",
              w.next_attempt_at ? h("div", { class: "muted" }, `next try ${fmtTime(w.next_attempt_at)}`) : "",
            ),
            h("td", {}, `event ${w.last_event_id}`),
            h("td", {}, w.last_success_at ? fmtTime(w.last_success_at) : h("span", { class: "muted" }, "never")),
            h(
              "td",
              { class: "actions" },
              h("button", { type: "button", class: "secondary", onclick: () => test(w) }, "Send test"),
              w.status === "disabled" ? h("button", { type: "button", onclick: () => enable(w) }, "Re-enable") : "",
              h("button", { type: "button", class: "danger", onclick: () => remove(w) }, "Delete"),
              tested ? h("div", { role: "status", class: tested.delivered ? "ok" : "error" }, tested.delivered ? `✔ test delivered (${tested.status})` : `✖ test failed: ${tested.error}`) : "",
            ),
          );
        }),
      ),
    );
  }

  async function load() {
    let webhooks;
    try {
      webhooks = (await call.list()).data;
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        replace($("webhooks-table"), h("p", { class: "empty" }, "This key is scoped to one agent: webhooks are managed with an organization key."));
        return;
      }
      throw e;
    }
    notice(webhooks);
    replace($("webhooks-table"), table(webhooks));
  }

  async function test(w) {
    try {
      lastTest.set(w.id, await call.test(w.id));
    } catch (e) {
      showError(e);
    }
    await refresh();
  }

  async function enable(w) {
    try {
      await call.enable(w.id);
    } catch (e) {
      showError(e);
    }
    await refresh();
  }

  async function remove(w) {
    const ok = await confirmDialog(`Delete the webhook endpoint ${w.url}?`, "No more events are sent to it. Its secret cannot be recovered.", "Delete endpoint");
    if (!ok) return;
    try {
      await call.remove(w.id);
    } catch (e) {
      showError(e);
    }
    await refresh();
  }

  function showSecret(created) {
    const panel = $("new-webhook");
    const field = h("input", { readonly: true, value: created.secret, "aria-label": "The endpoint's signing secret", spellcheck: "false" });
    replace(
      panel,
      h("h3", {}, "New endpoint"),
      h("p", {}, "⚠ Copy the signing secret now: it is shown only this once. Verify each message with it (docs/webhooks.md)."),
      h("div", { class: "copy-row" }, field),
      h("button", { type: "button", class: "secondary", onclick: () => { replace(panel); panel.hidden = true; } }, "Done, hide it"),
    );
    panel.hidden = false;
    field.select();
  }

  async function register(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const body = { url: form.elements.url.value.trim() };
    const types = WEBHOOK_EVENT_TYPES.filter((t) => form.elements[`type_${t}`]?.checked);
    if (types.length && types.length < WEBHOOK_EVENT_TYPES.length) body.event_types = types;
    if (form.elements.agent_id.value) body.agent_id = form.elements.agent_id.value;
    try {
      const created = await call.create(body);
      form.reset();
      showSecret(created);
      await refresh();
    } catch (e) {
      showError(e);
    }
  }

  return { load, checkNotice, register };
}
