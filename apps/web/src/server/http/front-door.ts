// What every HTTP request to the console goes through before Next.js (or the tests' server) sees it:
// the client's address settled from the socket and trusted proxies only (client-address.ts). One
// function, so the production server (apps/web/server.ts) and the integration tests' HTTP server
// (testing/console-over-http.ts) cannot drift apart.
import type { IncomingMessage } from "node:http";
import { settleForwardedHeaders, type TTrustedProxies } from "./client-address";

export interface TFrontDoor {
  trustedProxies: TTrustedProxies;
}

/** Settles the request's headers in place; returns the client's address (null only without a socket address). */
export function throughFrontDoor(req: IncomingMessage, door: TFrontDoor): string | null {
  return settleForwardedHeaders(req.headers, req.socket.remoteAddress, door.trustedProxies);
}
