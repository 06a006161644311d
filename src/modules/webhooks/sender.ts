/**
 * One signed webhook POST (Standard Webhooks, https://www.standardwebhooks.com): the body is the
 * message's JSON, the `webhook-id`, `webhook-timestamp` and `webhook-signature` headers come from the
 * `standardwebhooks` library's `Webhook.sign`. The request goes out through node:http(s) with
 * `pinnedLookup`, so it connects only to an address that passed the URL guard at this very delivery.
 * No redirect is followed (a 3xx is a failure), the answer's body is read up to 4 kB and dropped, and
 * the whole exchange has a deadline.
 */
import http from "node:http";
import https from "node:https";
import { Webhook } from "standardwebhooks";
import { ipLiteral, parseEndpointUrl, pinnedLookup, refusedAddress, type Resolve, WebhookUrlError } from "./url-guard.ts";

export interface WebhookMessage {
  /** `webhook-id`: the same on every attempt of this message, so a receiver can drop repeats. */
  id: string;
  /** The JSON body, exactly as signed. */
  body: string;
}

export interface DeliveryResult {
  ok: boolean;
  /** The receiver's HTTP status, or null when there was no answer. */
  status: number | null;
  /** What went wrong (never the secret, never the body): null when ok. */
  error: string | null;
  durationMs: number;
}

const MAX_ANSWER_BYTES = 4096;
const USER_AGENT = "agent-brokerage-webhooks/1";

/** Signs `message` with `secret` (`whsec_…`) at `now` and POSTs it to `url`. Never throws. */
export function sendWebhook(
  url: string,
  secret: string,
  message: WebhookMessage,
  opts: { now: Date; timeoutMs: number; allowPrivate: boolean; resolve?: Resolve },
): Promise<DeliveryResult> {
  const started = performance.now();
  const result = (ok: boolean, status: number | null, error: string | null): DeliveryResult => ({
    ok,
    status,
    error,
    durationMs: Math.round(performance.now() - started),
  });
  let target: URL;
  try {
    target = parseEndpointUrl(url);
    // A host that is an IP literal is connected to without a lookup: checked here.
    const literal = ipLiteral(target);
    const why = literal !== null && !opts.allowPrivate ? refusedAddress(literal) : null;
    if (why) throw new WebhookUrlError(`the URL's host is ${why}`);
  } catch (error) {
    return Promise.resolve(result(false, null, (error as Error).message));
  }
  const signature = new Webhook(secret).sign(message.id, opts.now, message.body);
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": message.id,
    "webhook-timestamp": String(Math.floor(opts.now.getTime() / 1000)),
    "webhook-signature": signature,
  };
  const client = target.protocol === "https:" ? https : http;
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const finish = (r: DeliveryResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const request = client.request(
      target,
      { method: "POST", headers, lookup: pinnedLookup(opts.allowPrivate, opts.resolve) as never, agent: false },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        const end = () =>
          finish(status >= 200 && status < 300 ? result(true, status, null) : result(false, status, `the endpoint answered ${status}`));
        response.on("end", end);
        response.on("close", end);
        response.on("error", end);
      },
    );
    const timer = setTimeout(() => {
      finish(result(false, null, `no answer within ${opts.timeoutMs} ms`));
      request.destroy();
    }, opts.timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (error instanceof WebhookUrlError || error.code === "EWEBHOOKADDRESS") finish(result(false, null, error.message));
      else finish(result(false, null, `connection failed: ${error.code ?? error.message}`));
    });
    request.end(message.body);
  });
}
