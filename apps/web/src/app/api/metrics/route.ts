// Prometheus scrape endpoint for the console process (default process metrics + request counts).
import { countRequests, webMetrics } from "@/server/metrics/registry";

export const dynamic = "force-dynamic";

export const GET = countRequests("/api/metrics", async () => {
  const { registry } = webMetrics();
  return new Response(await registry.metrics(), {
    headers: { "content-type": registry.contentType, "cache-control": "no-store" },
  });
});
