// Which address a request came from. `next start` keeps a client's own X-Forwarded-For and only fills
// it in when missing, so a client could choose the address the per-address sign-in limit and the
// audit log see. The console's front door (apps/web/server.ts, and the tests' HTTP server) calls
// `settleForwardedHeaders` on every request before Next.js sees it: forwarded headers count only when
// the socket's peer is a configured proxy (SLUICE_TRUSTED_PROXIES, default none), and what the rest
// of the console reads — X-Forwarded-For — is then exactly one address, the client's.
import type { IncomingHttpHeaders } from "node:http";
import net from "node:net";

export interface TTrustedProxies {
  /** Whether `address` (the socket's peer or a forwarded hop) is one of the configured proxies. */
  has(address: string): boolean;
  readonly entries: readonly string[];
}

/**
 * Parses SLUICE_TRUSTED_PROXIES: comma-separated addresses or CIDR ranges (IPv4 or IPv6). Throws an
 * Error naming the entry that is neither, so a typo cannot silently trust nobody (or everybody).
 */
export function parseTrustedProxies(text: string): TTrustedProxies {
  const list = new net.BlockList();
  const entries = text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = "", prefix, ...rest] = entry.split("/");
    const family = net.isIPv4(address) ? "ipv4" : net.isIPv6(address) ? "ipv6" : null;
    const bits = prefix === undefined ? null : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
    const max = family === "ipv4" ? 32 : 128;
    if (!family || rest.length > 0 || (bits !== null && !(bits >= 0 && bits <= max)))
      throw new Error(
        `SLUICE_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8)`,
      );
    if (bits === null) list.addAddress(address, family);
    else list.addSubnet(address, bits, family);
  }
  return {
    entries,
    has(address) {
      const plain = unmapped(address);
      const family = net.isIPv4(plain) ? "ipv4" : net.isIPv6(plain) ? "ipv6" : null;
      return family !== null && entries.length > 0 && list.check(plain, family);
    },
  };
}

export const NO_TRUSTED_PROXIES: TTrustedProxies = parseTrustedProxies("");

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) is 10.0.0.1. */
function unmapped(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

/**
 * The client's address: the socket's peer, unless that peer is a trusted proxy — then the
 * X-Forwarded-For chain is walked from the right (each proxy appends the address it saw) past
 * trusted proxies to the first hop that is not one. A malformed hop ends the walk at the last
 * address known to be honest.
 */
export function resolveClientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: TTrustedProxies,
): string | null {
  const peer = socketAddress ? unmapped(socketAddress) : null;
  if (!peer || !trusted.has(peer)) return peer;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : (forwardedFor ?? ""))
    .split(",")
    .map((h) => unmapped(h.trim()))
    .filter(Boolean);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!net.isIP(hop)) break;
    client = hop;
    if (!trusted.has(hop)) break;
  }
  return client;
}

/** Headers a client could set to claim another address or scheme; only a trusted proxy's count. */
const FORWARDING_HEADERS = [
  "forwarded",
  "x-real-ip",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "x-client-ip",
  "cf-connecting-ip",
  "true-client-ip",
] as const;

/**
 * Rewrites a request's headers in place before anything else reads them: X-Forwarded-For becomes the
 * one resolved client address; from an untrusted peer every forwarding header is dropped (Next.js
 * then sets host, proto and port from the socket itself).
 */
export function settleForwardedHeaders(
  headers: IncomingHttpHeaders,
  socketAddress: string | undefined,
  trusted: TTrustedProxies,
): string | null {
  const client = resolveClientAddress(socketAddress, headers["x-forwarded-for"], trusted);
  const fromProxy = socketAddress !== undefined && trusted.has(socketAddress);
  for (const name of FORWARDING_HEADERS)
    if (!fromProxy || name === "x-forwarded-for" || name === "x-real-ip" || name === "forwarded")
      delete headers[name];
  if (client) headers["x-forwarded-for"] = client;
  return client;
}
