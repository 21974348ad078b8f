export { uniqueName } from "./names";
export { testServices, databaseUrlFor } from "./services";
export { createTestDatabase, prepareTemplateDatabase, TEMPLATE_DATABASE, type TestDatabase } from "./database";
