// The console's API: one router per domain. Client code imports only the AppRouter type.
import { authRouter } from "./routers/auth-router";
import { healthRouter } from "./routers/health-router";
import { pipelineRouter } from "./routers/pipeline-router";
import { teamRouter } from "./routers/team-router";
import { webhookRouter } from "./routers/webhook-router";
import { createTrpcRouter } from "./init";

export const appRouter = createTrpcRouter({
  auth: authRouter,
  pipeline: pipelineRouter,
  team: teamRouter,
  health: healthRouter,
  webhook: webhookRouter,
});

export type AppRouter = typeof appRouter;
