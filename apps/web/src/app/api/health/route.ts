// Reachability of Postgres, Redis and Kafka for load balancers and humans. Unauthenticated by
// design, so it reports only ok/latency/error per service: no URLs, hosts' credentials or versions.
import { checkServiceHealth } from "@/server/health/service-health";
import { countRequests } from "@/server/metrics/registry";

export const dynamic = "force-dynamic";

export const GET = countRequests("/api/health", async () => {
  const { status, checks } = await checkServiceHealth();
  return Response.json(
    { status, checks },
    { status: status === "ok" ? 200 : 503, headers: { "cache-control": "no-store" } },
  );
});
