export { uniqueName } from "./names";
export { testServices, databaseUrlFor } from "./services";
export { createTestDatabase, prepareTemplateDatabase, templateDatabase, type TestDatabase } from "./database";
export { endPool } from "./end-pool";
export { waitFor } from "./wait-for";
export { freePort } from "./free-port";
export { startPrivatePostgres, type PrivatePostgres } from "./private-postgres";
export { startPrivateKafka, type PrivateKafka } from "./private-kafka";
export { startOidcProvider, type TRunningOidcProvider } from "./oidc/start-oidc-provider";
export { TEST_IDENTITIES, TEST_OIDC_CLIENT, type TTestIdentity } from "./oidc/test-identities";
export { createTestUsers, type TTestUser } from "./users";
export { testProcessEnv } from "./outbound-env";
export {
  startOnCallReceiver,
  type TOnCallReceiver,
  type TReceivedPage,
  type TChannel,
} from "./receivers/start-on-call-receiver";
export { checkSlackMessage } from "./receivers/check-slack-message";
export { checkPagerDutyEvent } from "./receivers/check-pagerduty-event";
