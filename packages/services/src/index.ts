export { hashPassword, verifyPassword } from "./auth/password";
export { seedDemo, DEMO_TEAMS, DEMO_USERS } from "./demo/seed-demo";
export { loadDemoPipelineSpecs } from "./demo/demo-pipelines";
export { ROLES, hasRole, type TRole } from "./auth/roles";
export { authenticateUser } from "./auth/authenticate-user";
export { getSessionUser, type TSessionUser } from "./users/get-session-user";
export { findPipelines, type TPipelineSummary } from "./pipelines/find-pipelines";
export { findTeams, type TTeamSummary } from "./teams/find-teams";
export {
  runHealthChecks,
  describeError,
  maskCredentials,
  type THealthCheckResult,
  type THealthProbe,
  type THealthReport,
} from "./health/run-health-checks";
