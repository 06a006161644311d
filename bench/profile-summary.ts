/**
 * Sums a `.cpuprofile` (from `bun --cpu-prof`, e.g. `bun bench/venue.ts --cpu-prof DIR`) per function:
 * `bun bench/profile-summary.ts FILE [--top N] [--from S] [--to S] [--last S] [--match TEXT] [--callers TEXT]`.
 *
 * Self time is the samples whose top frame is the function; inclusive time the samples with the
 * function anywhere on their stack (counted once per sample however often it recurses). Functions are
 * keyed by name, file and line. `--from`/`--to` keep the samples between those seconds after the
 * profile's start (to leave out start-up), `--last S` those of its last S seconds (the bench's last
 * phase and the service's shut-down); `--match` lists only the functions whose key contains TEXT; `--callers TEXT` adds the time of the frames
 * matching TEXT by the nearest frame outside them on the stack.
 * Idle time (`(idle)`, `(program)`) is shown in the header and left out of the percentages.
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = Bun.argv.slice(2);
const file = args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"));
if (!file) throw new Error("usage: bun bench/profile-summary.ts FILE [--top N] [--from S] [--to S] [--last S] [--match TEXT]");
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const top = Number(opt("--top", "40"));
const to = Number(opt("--to", "1e12")) * 1e6;
const match = opt("--match", "");
const last = Number(opt("--last", "0")) * 1e6;

const prof = JSON.parse(readFileSync(file, "utf8")) as Profile;
const span = prof.timeDeltas.reduce((a, b) => a + b, 0);
const from = last > 0 ? span - last : Number(opt("--from", "0")) * 1e6;
const byId = new Map<number, Node>();
const parent = new Map<number, number>();
for (const n of prof.nodes) {
  byId.set(n.id, n);
  for (const c of n.children ?? []) parent.set(c, n.id);
}
const short = (url: string) => url.replace(/^.*\/(node_modules\/)/, "$1").replace(/^.*\/wt\/[^/]+\//, "").replace(/^file:\/\//, "");
const key = (n: Node) => `${n.callFrame.functionName || "(anonymous)"} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

const callersOf = opt("--callers", "");
const callers = new Map<string, number>();
const self = new Map<string, number>();
const incl = new Map<string, number>();
let total = 0;
let idle = 0;
let t = 0;
for (let i = 0; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i + 1] ?? 0; // the time until the next sample is this sample's
  t += prof.timeDeltas[i];
  if (t < from || t > to) continue;
  const leaf = byId.get(prof.samples[i])!;
  const name = leaf.callFrame.functionName;
  if (name === "(idle)" || name === "(program)") {
    idle += dt;
    continue;
  }
  total += dt;
  self.set(key(leaf), (self.get(key(leaf)) ?? 0) + dt);
  const seen = new Set<string>();
  let inside = false; // a frame matching --callers is below this one, and its caller not yet counted
  let counted = false;
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
    const k = key(byId.get(id)!);
    if (callersOf && !counted) {
      if (k.includes(callersOf)) inside = true;
      else if (inside) {
        callers.set(k, (callers.get(k) ?? 0) + dt);
        counted = true;
      }
    }
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + dt);
  }
}
const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
const pct = (us: number) => ((100 * us) / total).toFixed(1).padStart(5);
console.log(`${file}: ${ms(total)} ms busy, ${ms(idle)} ms idle, ${((t) / 1e6).toFixed(1)} s profiled`);
const list = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].filter(([k]) => !match || k.includes(match)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(v)} ms ${pct(v)} %  ${k}`);
};
list("self", self);
list("inclusive", incl);
if (callersOf) list(`callers of ${callersOf} (the nearest frame outside it)`, callers);
