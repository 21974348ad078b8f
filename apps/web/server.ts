// The console's HTTP server: Next.js behind Sluice's front door (src/server/http/front-door.ts).
// `next start` cannot be used: it keeps a client's own X-Forwarded-For and gives route handlers no
// other way to the socket's address, so a client could choose the address the sign-in limits and the
// audit log see. Here every request's forwarded headers are settled from the socket (and
// SLUICE_TRUSTED_PROXIES) before Next.js reads them, and every response gets the security headers. Run: `node --import tsx apps/web/server.ts`
// after `next build` (scripts/up.sh, scripts/e2e.sh); PORT and SLUICE_LISTEN_HOST say where to listen.
import http from "node:http";
import path from "node:path";
import { loadEnv } from "@sluice/config";
import next from "next";
import { parseTrustedProxies } from "./src/server/http/client-address";
import { throughFrontDoor } from "./src/server/http/front-door";
import { consoleOrigins, ZWebEnv } from "./src/server/web-env";

function fail(message: string): never {
  process.stderr.write(`sluice console: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const env = loadEnv(ZWebEnv);
  if (env.NODE_ENV !== "production")
    fail(
      `NODE_ENV is ${env.NODE_ENV}: the console serves its production build (\`next build\`); run it with NODE_ENV=production`,
    );
  const door = {
    trustedProxies: parseTrustedProxies(env.SLUICE_TRUSTED_PROXIES),
    https: consoleOrigins(env).publicUrl.startsWith("https:"),
  };
  const app = next({
    dev: false,
    dir: path.dirname(new URL(import.meta.url).pathname),
    hostname: env.SLUICE_LISTEN_HOST,
    port: env.PORT,
  });
  const handle = app.getRequestHandler();
  await app.prepare();
  const server = http.createServer((req, res) => {
    throughFrontDoor(req, res, door);
    void handle(req, res);
  });
  server.on("error", (err) => fail(`cannot listen on ${env.SLUICE_LISTEN_HOST}:${env.PORT}: ${err.message}`));
  server.listen(env.PORT, env.SLUICE_LISTEN_HOST, () =>
    process.stdout.write(
      `sluice console on http://${env.SLUICE_LISTEN_HOST}:${env.PORT}` +
        (door.trustedProxies.entries.length
          ? ` (trusted proxies: ${door.trustedProxies.entries.join(", ")})\n`
          : "\n"),
    ),
  );
  // Graceful stop: finish the requests in flight, then exit.
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err: Error) => fail(err.message));
