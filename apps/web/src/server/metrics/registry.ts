// The console's Prometheus registry, served at /api/metrics. One per process (on globalThis, so
// dev-mode module reloads do not register the same metric twice).
import { Counter, Registry, collectDefaultMetrics } from "prom-client";

interface TWebMetrics {
  registry: Registry;
  httpRequests: Counter<"route" | "method" | "status">;
}

const holder = globalThis as typeof globalThis & { __sluiceMetrics?: TWebMetrics };

export function webMetrics(): TWebMetrics {
  if (!holder.__sluiceMetrics) {
    const registry = new Registry();
    registry.setDefaultLabels({ service: "sluice-web" });
    collectDefaultMetrics({ register: registry });
    const httpRequests = new Counter({
      name: "sluice_web_http_requests_total",
      help: "HTTP requests answered by the console's API routes, by route, method and status.",
      labelNames: ["route", "method", "status"] as const,
      registers: [registry],
    });
    holder.__sluiceMetrics = { registry, httpRequests };
  }
  return holder.__sluiceMetrics;
}

/** Wrap a route handler so each answer is counted. `route` is the pattern, never the raw URL. */
export function countRequests<A extends unknown[]>(
  route: string,
  handler: (req: Request, ...rest: A) => Promise<Response>,
): (req: Request, ...rest: A) => Promise<Response> {
  return async (req, ...rest) => {
    let status = 500;
    try {
      const res = await handler(req, ...rest);
      status = res.status;
      return res;
    } finally {
      webMetrics().httpRequests.inc({ route, method: req.method, status: String(status) });
    }
  };
}
