// DOM helpers and formatting. Everything is built with createElement and textContent: no HTML
// strings, so nothing the API returns can become markup.

/** h("button", {class: "x", onclick: fn}, "text", child) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces the children of `el`, keeping keyboard focus on the element with the same data-focus key. */
export function replace(el, ...children) {
  const focused = document.activeElement;
  const key = focused && el.contains(focused) ? focused.dataset.focus : undefined;
  el.replaceChildren();
  append(el, children);
  if (key) el.querySelector(`[data-focus="${CSS.escape(key)}"]`)?.focus();
}

const SVG_NS = "http://www.w3.org/2000/svg";
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) el.setAttribute(name, String(value));
  append(el, children);
  return el;
}

// ------------------------------------------------------------------------ formatting

const usd = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 });
export const fmtUsdc = (n) => (n === null || n === undefined ? "–" : `${usd.format(n)} USDC`);
export const fmtNumber = (n) => (n === null || n === undefined ? "–" : String(n));
export const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : "–");

/** "12 s", "5 min", "3 h", "2 d" since `iso`. */
export function fmtAge(iso, now = Date.now()) {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

export const shortId = (id) => (id && id.length > 14 ? `${id.slice(0, 4)}…${id.slice(-6)}` : (id ?? "–"));

// ------------------------------------------------------------------------ status words

/** Order status → [icon, tone]. The word is always shown beside the icon: never colour alone. */
const ORDER_STATUS = {
  pending_approval: ["‖", "warn"],
  awaiting_signature: ["✎", "info"],
  submitting: ["↑", "info"],
  open: ["●", "ok"],
  filled: ["✔", "done"],
  cancelled: ["✖", "muted"],
  expired: ["◷", "muted"],
  rejected: ["⊘", "bad"],
  failed: ["⚠", "bad"],
  unknown: ["?", "warn"],
};
export const ORDER_STATUSES = Object.keys(ORDER_STATUS);

export function statusBadge(status) {
  const [icon, tone] = ORDER_STATUS[status] ?? ["•", "muted"];
  return h("span", { class: `badge ${tone}` }, h("span", { "aria-hidden": "true" }, icon), ` ${status.replaceAll("_", " ")}`);
}

export function breakerBadge(breaker) {
  if (breaker.state === "closed") return h("span", { class: "badge ok" }, h("span", { "aria-hidden": "true" }, "✔"), " breaker closed");
  const why = breaker.reason ? ` (${breaker.reason.replaceAll("_", " ")})` : "";
  return h("span", { class: "badge bad" }, h("span", { "aria-hidden": "true" }, "⊘"), ` breaker tripped${why}`);
}

export const flaggedBadge = () => h("span", { class: "badge bad" }, h("span", { "aria-hidden": "true" }, "⚑"), " flagged for review");

/** A message for a table or list with nothing in it. */
export const empty = (text) => h("p", { class: "empty" }, text);
