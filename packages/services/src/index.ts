export { hashPassword, verifyPassword } from "./auth/password";
export { seedDemo, DEMO_TEAMS, DEMO_USERS } from "./demo/seed-demo";
