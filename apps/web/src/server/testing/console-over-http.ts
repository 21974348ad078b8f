// The console under test on a real socket (127.0.0.1, a free port), for tests that must go through
// HTTP: concurrent requests sharing one event loop, bodies streamed as bytes, addresses from the
// socket. Each request passes the same front door as in production (http/front-door.ts: forwarded
// headers believed only from `trustedProxies`, security headers on every response), then the
// console's handlers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { NO_TRUSTED_PROXIES, type TTrustedProxies } from "../http/client-address";
import { throughFrontDoor } from "../http/front-door";
import type { TConsoleUnderTest } from "./console-under-test";

export interface TConsoleOverHttp {
  url: string;
  close(): Promise<void>;
}

export async function serveOverHttp(
  cut: Pick<TConsoleUnderTest, "handle">,
  opts: { trustedProxies?: TTrustedProxies; https?: boolean } = {},
): Promise<TConsoleOverHttp> {
  const door = { trustedProxies: opts.trustedProxies ?? NO_TRUSTED_PROXIES, https: opts.https ?? false };
  const server = http.createServer((req, res) => {
    throughFrontDoor(req, res, door);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === "string") headers.set(name, value);
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      // Streamed, as Next.js hands it to route handlers: a handler decides how much of it to read.
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
    } as RequestInit);
    void cut
      .handle(request)
      .then(async (response) => {
        for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
        if (response.headers.has("set-cookie")) res.setHeader("set-cookie", response.headers.getSetCookie());
        res.writeHead(response.status);
        res.end(Buffer.from(await response.arrayBuffer()));
      })
      .catch((err: Error) => res.writeHead(500).end(err.message));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
