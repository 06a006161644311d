/**
 * The dashboard's files, embedded as text (Bun text imports) so the compiled binary serves them
 * with no build step. Browser modules are plain JavaScript; TypeScript does not type a text import
 * of a .js file, hence the expect-error lines: each import is a string at run time.
 */
import page from "./assets/index.html" with { type: "text" };
import style from "./assets/dashboard.css" with { type: "text" };
import icon from "./assets/icon.svg" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import app from "./assets/app.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import api from "./assets/api.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import live from "./assets/live.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import charts from "./assets/charts.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import dom from "./assets/dom.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import views from "./assets/views.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import webhooks from "./assets/webhooks.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import sseParse from "../../../node_modules/eventsource-parser/dist/parse.js" with { type: "text" };
// @ts-expect-error: a text import of a browser module is a string
import sseErrors from "../../../node_modules/eventsource-parser/dist/errors.js" with { type: "text" };

export interface Asset {
  body: string;
  type: string;
}

const JS = "text/javascript; charset=utf-8";
/** The package's source-map comments point at files that are not served: dropped. */
const noSourceMap = (text: string) => text.replace(/^\/\/# sourceMappingURL=.*$/m, "");

/** Path below /dashboard/ → file. */
export const ASSETS: ReadonlyMap<string, Asset> = new Map<string, Asset>([
  ["dashboard.css", { body: style, type: "text/css; charset=utf-8" }],
  ["icon.svg", { body: icon, type: "image/svg+xml" }],
  ["app.js", { body: app as string, type: JS }],
  ["api.js", { body: api as string, type: JS }],
  ["live.js", { body: live as string, type: JS }],
  ["charts.js", { body: charts as string, type: JS }],
  ["dom.js", { body: dom as string, type: JS }],
  ["views.js", { body: views as string, type: JS }],
  ["webhooks.js", { body: webhooks as string, type: JS }],
  ["vendor/eventsource-parser/parse.js", { body: noSourceMap(sseParse as string), type: JS }],
  ["vendor/eventsource-parser/errors.js", { body: noSourceMap(sseErrors as string), type: JS }],
]);

// bun-types declare .html imports as HTML bundles; with type "text" it is the file's text.
export const PAGE: Asset = { body: page as unknown as string, type: "text/html; charset=utf-8" };
