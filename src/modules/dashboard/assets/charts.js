// Two small charts drawn as SVG (no library): intents per hour and daily volume per agent. Each bar
// has a <title> with its numbers, the legend names every series, and the caption states the
// totals, so nothing depends on colour alone.
import { h, svg } from "./dom.js";

const W = 640;
const H = 220;
const PAD = { left: 44, right: 8, top: 12, bottom: 34 };
const PALETTE = ["#1f77b4", "#d95f02", "#7570b3", "#1b9e77", "#e7298a", "#66a61e", "#a6761d", "#666666"];

function niceMax(n) {
  if (n <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

function frame(max, titleText, hatch = false) {
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": titleText, class: "chart-svg" });
  if (hatch) root.append(
    svg(
      "defs",
      {},
      svg(
        "pattern",
        { id: "hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
        svg("rect", { width: 6, height: 6, class: "bar-rejected" }),
        svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "hatch-line" }),
      ),
    ),
  );
  const y = (v) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  for (const f of [0, 0.5, 1]) {
    const v = max * f;
    root.append(
      svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "grid" }),
      svg("text", { x: PAD.left - 6, y: y(v) + 4, class: "axis", "text-anchor": "end" }, Number.isInteger(v) ? String(v) : v.toFixed(1)),
    );
  }
  return { root, y };
}

function legend(items) {
  return h(
    "ul",
    { class: "legend" },
    items.map(([label, cls]) => h("li", {}, svg("svg", { width: 14, height: 14, "aria-hidden": "true" }, svg("rect", { width: 14, height: 14, class: cls })), ` ${label}`)),
  );
}

/** Approved and rejected intents per hour (stacked; rejections hatched). */
export function intentsChart(intents) {
  const total = intents.reduce((s, b) => ({ a: s.a + b.approved, r: s.r + b.rejected }), { a: 0, r: 0 });
  const caption = `Intents per hour, last ${intents.length} h: ${total.a} approved, ${total.r} rejected`;
  const max = niceMax(Math.max(0, ...intents.map((b) => b.approved + b.rejected)));
  const { root, y } = frame(max, caption, true);
  const slot = (W - PAD.left - PAD.right) / Math.max(1, intents.length);
  intents.forEach((b, i) => {
    const x = PAD.left + i * slot + slot * 0.15;
    const w = slot * 0.7;
    const hour = new Date(b.at);
    const label = `${hour.getHours().toString().padStart(2, "0")}:00`;
    const title = `${label}: ${b.approved} approved, ${b.rejected} rejected`;
    const g = svg("g", { class: "bar" }, svg("title", {}, title));
    if (b.approved) g.append(svg("rect", { x, width: w, y: y(b.approved), height: y(0) - y(b.approved), class: "bar-approved" }));
    if (b.rejected) {
      const top = y(b.approved + b.rejected);
      g.append(svg("rect", { x, width: w, y: top, height: y(b.approved) - top, class: "bar-rejected-hatched" }));
    }
    root.append(g);
    if (i % Math.ceil(intents.length / 8) === 0) root.append(svg("text", { x: x + w / 2, y: H - PAD.bottom + 16, class: "axis", "text-anchor": "middle" }, label));
  });
  return [h("figcaption", {}, caption), root, legend([["approved", "bar-approved"], ["rejected", "bar-rejected-hatched"]])];
}

/** Daily volume per agent (grouped bars per UTC day). */
export function volumeChart(daily, agentName) {
  const days = [...new Set(daily.map((d) => d.day))].sort();
  const agents = [...new Set(daily.map((d) => d.agent_id))];
  const caption = days.length ? `Daily volume per agent, last ${days.length} day${days.length === 1 ? "" : "s"} with volume (USDC)` : "Daily volume per agent";
  if (!days.length) return [h("figcaption", {}, caption), h("p", { class: "empty" }, "No volume in the last 7 days.")];
  const max = niceMax(Math.max(...daily.map((d) => d.used_usdc)));
  const { root, y } = frame(max, caption);
  const slot = (W - PAD.left - PAD.right) / days.length;
  const barW = (slot * 0.8) / agents.length;
  days.forEach((day, i) => {
    agents.forEach((agent, j) => {
      const entry = daily.find((d) => d.day === day && d.agent_id === agent);
      if (!entry) return;
      const x = PAD.left + i * slot + slot * 0.1 + j * barW;
      root.append(
        svg(
          "g",
          { class: "bar" },
          svg("title", {}, `${day}, ${agentName(agent)}: ${entry.used_usdc} USDC`),
          svg("rect", { x, width: Math.max(1, barW - 2), y: y(entry.used_usdc), height: y(0) - y(entry.used_usdc), class: `series-${j % PALETTE.length}` }),
        ),
      );
    });
    root.append(svg("text", { x: PAD.left + i * slot + slot / 2, y: H - PAD.bottom + 16, class: "axis", "text-anchor": "middle" }, day.slice(5)));
  });
  return [h("figcaption", {}, caption), root, legend(agents.map((a, j) => [agentName(a), `series-${j % PALETTE.length}`]))];
}

export const SERIES_COLOURS = PALETTE;
