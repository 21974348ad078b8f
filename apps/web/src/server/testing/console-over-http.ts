// The console under test on a real socket (127.0.0.1, a free port), for tests that must go through
// HTTP: concurrent requests sharing one event loop, bodies as bytes, addresses from the socket.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { TConsoleUnderTest } from "./console-under-test";

export interface TConsoleOverHttp {
  url: string;
  close(): Promise<void>;
}

export async function serveOverHttp(cut: Pick<TConsoleUnderTest, "handle">): Promise<TConsoleOverHttp> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === "string") headers.set(name, value);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body,
      });
      void cut
        .handle(request)
        .then(async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers));
          res.end(Buffer.from(await response.arrayBuffer()));
        })
        .catch((err: Error) => res.writeHead(500).end(err.message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
