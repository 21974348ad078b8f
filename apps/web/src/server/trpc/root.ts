// The console's API: one router per domain. Client code imports only the AppRouter type.
import { adminRouter } from "./routers/admin-router";
import { alertRouter } from "./routers/alert-router";
import { draftRouter } from "./routers/draft-router";
import { auditRouter } from "./routers/audit-router";
import { authRouter } from "./routers/auth-router";
import { changeRouter } from "./routers/change-router";
import { deadLetterRouter } from "./routers/dead-letter-router";
import { healthRouter } from "./routers/health-router";
import { pipelineRouter } from "./routers/pipeline-router";
import { fleetRouter, signalsRouter } from "./routers/signals-router";
import { rolloutRouter } from "./routers/rollout-router";
import { runRouter } from "./routers/run-router";
import { teamRouter } from "./routers/team-router";
import { webhookRouter } from "./routers/webhook-router";
import { createTrpcRouter } from "./init";

export const appRouter = createTrpcRouter({
  auth: authRouter,
  pipeline: pipelineRouter,
  fleet: fleetRouter,
  signals: signalsRouter,
  team: teamRouter,
  health: healthRouter,
  webhook: webhookRouter,
  run: runRouter,
  admin: adminRouter,
  alert: alertRouter,
  draft: draftRouter,
  audit: auditRouter,
  change: changeRouter,
  deadLetter: deadLetterRouter,
  rollout: rolloutRouter,
});

export type AppRouter = typeof appRouter;
