/**
 * Which URLs a webhook may be sent to (docs/webhooks.md#endpoint-urls): http or https, no user name or
 * password in the URL, and a host that is, or resolves only to, public unicast addresses, unless the
 * operator allows private ones (WEBHOOK_ALLOW_PRIVATE). The addresses are classified by ipaddr.js;
 * only its `unicast` range passes (private, loopback, link-local, unique-local, carrier-grade NAT,
 * multicast, reserved, 6to4, Teredo, NAT64, … do not), and an IPv4-mapped IPv6 address is judged as
 * the IPv4 address it carries.
 *
 * A delivery connects through `pinnedLookup`: the name is resolved once, every address checked, and
 * the connection made to those very addresses, so a name cannot be re-pointed at an inside address
 * between the check and the connection (DNS rebinding).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress } from "node:dns";
import ipaddr from "ipaddr.js";

/** Why a URL or address is refused: a sentence for a problem's detail or a delivery's error. */
export class WebhookUrlError extends Error {
  override name = "WebhookUrlError";
}

const MAX_URL_LENGTH = 2048;

/** The URL as the endpoint stores it, or a WebhookUrlError saying what is wrong with it (no DNS). */
export function parseEndpointUrl(text: string): URL {
  if (text.length > MAX_URL_LENGTH) throw new WebhookUrlError(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError("the URL does not parse");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new WebhookUrlError("the URL must use http or https");
  if (url.username !== "" || url.password !== "") throw new WebhookUrlError("the URL must not hold a user name or password");
  if (url.hostname === "") throw new WebhookUrlError("the URL has no host");
  if (url.hash !== "") throw new WebhookUrlError("the URL must not have a fragment");
  return url;
}

/** The host of a parsed URL as an IP literal (brackets removed), or null for a name. */
export function ipLiteral(url: URL): string | null {
  const host = url.hostname.startsWith("[") && url.hostname.endsWith("]") ? url.hostname.slice(1, -1) : url.hostname;
  return ipaddr.isValid(host) && (host.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(host)) ? host : null;
}

/**
 * Why a delivery may not go to `address` (null: it may), as a noun phrase without the address ("a
 * loopback address"): anything but a public unicast address. The WHATWG URL parser has already turned
 * `0x7f.1`, `2130706433` and the like into dotted quads.
 */
export function refusedAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return "not an IP address";
  let ip = ipaddr.parse(address);
  let mapped = "";
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
    ip = (ip as ipaddr.IPv6).toIPv4Address();
    mapped = "IPv4-mapped ";
  }
  const range = ip.range();
  if (range !== "unicast") {
    const kind = `${mapped}${rangeName(range)}`;
    return `${/^(IPv4|unspecified)/.test(kind) ? "an" : "a"} ${kind} address`;
  }
  // IPv4-compatible addresses (::a.b.c.d, deprecated) carry an IPv4 address too.
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return "an IPv4-compatible IPv6 address";
  return null;
}

function rangeName(range: string): string {
  const names: Record<string, string> = {
    private: "private",
    loopback: "loopback",
    linkLocal: "link-local",
    uniqueLocal: "unique-local (private)",
    unspecified: "unspecified",
    carrierGradeNat: "carrier-grade NAT",
    multicast: "multicast",
    broadcast: "broadcast",
    ipv4Mapped: "IPv4-mapped",
  };
  return names[range] ?? `non-public (${range})`;
}

/** Resolves `hostname` (every address) and refuses it unless all of them are allowed. */
/** Resolves a host name to every address (node:dns `lookup` with `all: true`, or a test's own). */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;
export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** How long a name may take to resolve at registration (a delivery has its own deadline). */
const RESOLVE_TIMEOUT_MS = 5_000;

export async function resolveAllowed(hostname: string, allowPrivate: boolean, resolve: Resolve = systemResolve): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    addresses = await Promise.race([
      resolve(hostname),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), RESOLVE_TIMEOUT_MS);
      }),
    ]);
  } catch {
    throw new WebhookUrlError("the URL's host does not resolve");
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw new WebhookUrlError("the URL's host does not resolve");
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = refusedAddress(a.address);
      // The resolved address is named (it is not part of the request); the host name is not repeated.
      if (why) throw new WebhookUrlError(`the URL's host resolves to ${why} (${a.address}); the operator's WEBHOOK_ALLOW_PRIVATE=true allows it`);
    }
  }
  return addresses;
}

/**
 * Checks an endpoint URL as it is registered and before each delivery: its form, then its host (an IP
 * literal directly, a name through DNS). Throws WebhookUrlError.
 */
export async function checkEndpointUrl(text: string, allowPrivate: boolean, resolve: Resolve = systemResolve): Promise<URL> {
  const url = parseEndpointUrl(text);
  const literal = ipLiteral(url);
  if (literal !== null) {
    if (!allowPrivate) {
      const why = refusedAddress(literal);
      if (why) throw new WebhookUrlError(`the URL's host is ${why}; the operator's WEBHOOK_ALLOW_PRIVATE=true allows it`);
    }
  } else {
    await resolveAllowed(url.hostname, allowPrivate, resolve);
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s) requests: resolves the name and checks every address (unless private ones
 * are allowed), so the socket connects only to an address that passed the check.
 */
export function pinnedLookup(allowPrivate: boolean, resolve: Resolve = systemResolve) {
  return (hostname: string, options: { all?: boolean } | number | undefined, callback: LookupCallback): void => {
    const host = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
    const done = (addresses: LookupAddress[]) => {
      if (typeof options === "object" && options?.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    };
    if (ipaddr.isValid(host)) {
      const why = allowPrivate ? null : refusedAddress(host);
      if (why) return callback(Object.assign(new WebhookUrlError(`the URL's host is ${why}`), { code: "EWEBHOOKADDRESS" }), "");
      return done([{ address: host, family: host.includes(":") ? 6 : 4 }]);
    }
    resolveAllowed(host, allowPrivate, resolve).then(done, (error: Error) => callback(Object.assign(error, { code: "EWEBHOOKADDRESS" }), ""));
  };
}
