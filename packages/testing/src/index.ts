export { uniqueName } from "./names";
export { testServices, databaseUrlFor } from "./services";
export { createTestDatabase, prepareTemplateDatabase, templateDatabase, type TestDatabase } from "./database";
export { endPool } from "./end-pool";
