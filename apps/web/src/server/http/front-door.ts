// What every HTTP request to the console goes through before Next.js (or the tests' server) sees it:
// the client's address settled from the socket and trusted proxies only (client-address.ts), and the
// security headers every response carries (security-headers.ts). One function, so the production server (apps/web/server.ts) and the integration tests' HTTP server
// (testing/console-over-http.ts) cannot drift apart.
import type { IncomingMessage, ServerResponse } from "node:http";
import { settleForwardedHeaders, type TTrustedProxies } from "./client-address";
import { baseSecurityHeaders } from "./security-headers";

export interface TFrontDoor {
  trustedProxies: TTrustedProxies;
  /** The console is reached over https (SLUICE_PUBLIC_URL): HSTS. */
  https: boolean;
}

/**
 * Settles the request's headers in place and puts the security headers on the response before any
 * handler writes it; returns the client's address (null only without a socket address).
 */
export function throughFrontDoor(req: IncomingMessage, res: ServerResponse, door: TFrontDoor): string | null {
  for (const [name, value] of Object.entries(baseSecurityHeaders({ https: door.https })))
    res.setHeader(name, value);
  return settleForwardedHeaders(req.headers, req.socket.remoteAddress, door.trustedProxies);
}
