/**
 * Problem `type` URIs lead to the section of docs/api.md that explains the code: every problem code
 * the source can answer has a heading there, every `docs/api.md#anchor` cited in code and docs exists,
 * and the running service serves the reference at the path the URIs point to.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";

const ROOT = join(import.meta.dir, "../..");
const API_MD = readFileSync(join(ROOT, "docs/api.md"), "utf8");

function filesUnder(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, ext));
    else if (ext.test(name)) out.push(path);
  }
  return out;
}

/** GitHub's heading anchors: lower-cased, punctuation other than `-` and `_` dropped, spaces to `-`. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```$/gm, "").matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-"));
  }
  return out;
}

const SOURCES = [...filesUnder(join(ROOT, "src"), /\.ts$/), ...filesUnder(join(ROOT, "actors"), /\.ts$/)];
const sourceText = SOURCES.map((f) => readFileSync(f, "utf8")).join("\n");

/** Problem codes: `super(404, "not_found", …)` in the error classes, or `new ProblemError(4xx, "…")` anywhere. */
const PROBLEM_CODES = [...new Set([...sourceText.matchAll(/(?:super|new ProblemError)\(\s*\d{3},\s*"([a-z0-9_]+)"/g)].map((m) => m[1]))];

/** Risk failure codes: `code: "…"` and `fail("…"` in the checks. */
const riskText = filesUnder(join(ROOT, "src/risk"), /\.ts$/).map((f) => readFileSync(f, "utf8")).join("\n");
const RISK_CODES = [...new Set([...riskText.matchAll(/(?:code: |fail\(\s*)"([a-z0-9_]+)"/g)].map((m) => m[1]))];

describe("problem type URIs and docs/api.md", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await sharedPglite());
  });

  test("every problem code in the source has its own section in docs/api.md", () => {
    expect(PROBLEM_CODES.length).toBeGreaterThanOrEqual(20);
    const have = anchors(API_MD);
    const missing = PROBLEM_CODES.filter((code) => !have.has(code));
    expect(missing).toEqual([]);
  });

  test("every risk failure code is listed in docs/api.md", () => {
    expect(RISK_CODES.length).toBeGreaterThanOrEqual(20);
    expect(RISK_CODES.filter((code) => !API_MD.includes(`\`${code}\``))).toEqual([]);
  });

  test("every docs/*.md#anchor and README.md#anchor cited in code, README and docs exists", () => {
    const targets = new Map<string, Set<string>>();
    for (const f of ["README.md", ...readdirSync(join(ROOT, "docs")).map((n) => `docs/${n}`)]) {
      if (f.endsWith(".md")) targets.set(f, anchors(readFileSync(join(ROOT, f), "utf8")));
    }
    const files = [...SOURCES, join(ROOT, "README.md"), ...filesUnder(join(ROOT, "docs"), /\.md$/)];
    const broken: string[] = [];
    let cited = 0;
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/((?:docs\/)?[a-zA-Z-]+\.md)#([a-z0-9_-]+)/g)) {
        const target = m[1] === "README.md" || m[1].startsWith("docs/") ? m[1] : `docs/${m[1]}`;
        cited++;
        if (!targets.get(target)?.has(m[2])) broken.push(`${relative(ROOT, file)}: ${target}#${m[2]}`);
      }
      if (file.endsWith(".md")) {
        const own = anchors(text);
        for (const m of text.matchAll(/\]\(#([a-z0-9_-]+)\)/g)) if (!own.has(m[1])) broken.push(`${relative(ROOT, file)}: (#${m[1]})`);
      }
    }
    expect(cited).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });

  test("no code comment cites the outside contract document any more", () => {
    const citing = SOURCES.filter((f) => /CONTRACT(?:\.md)?\s*(?:section\s*)?\d/.test(readFileSync(f, "utf8"))).map((f) => relative(ROOT, f));
    expect(citing).toEqual([]);
  });

  test("a real error's type leads to the service's copy of docs/api.md, at the code's heading", async () => {
    const res = await t.call("GET", `/v1/agents/agt_${"0".repeat(20)}`, { key: (await t.newOrg()).key });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toStartWith("application/problem+json");
    expect(res.body.type).toBe("/docs/api#not_found");
    const target = new URL(res.body.type, "http://localhost/v1/agents/x");
    expect(target.pathname).toBe("/docs/api");
    const doc = await t.call("GET", target.pathname);
    expect(doc.status).toBe(200);
    expect(doc.headers.get("content-type")).toStartWith("text/markdown");
    expect(doc.text).toBe(API_MD);
    expect(anchors(doc.text).has(target.hash.slice(1))).toBe(true);
  });
});
