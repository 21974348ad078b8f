import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../demo/seed-demo";
import { getSessionUser } from "../users/get-session-user";
import { authenticateUser } from "./authenticate-user";

let database: TestDatabase;
let db: PrismaClient;

beforeAll(async () => {
  database = await createTestDatabase("authenticate_user");
  db = createPrismaClient(database.url);
  await seedDemo(db, "correct-horse");
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("authenticateUser", () => {
  it("the right password signs in and never returns the password hash", async () => {
    const user = await authenticateUser(db, { email: " Operator@Sluice.local ", password: "correct-horse" });
    expect(user).toEqual({
      id: expect.any(String),
      email: "operator@sluice.local",
      name: "Oona Operator",
      role: "operator",
    });
    expect(JSON.stringify(user)).not.toContain("scrypt");
  });

  it("a wrong password and an unknown email both return null", async () => {
    expect(await authenticateUser(db, { email: "operator@sluice.local", password: "nope" })).toBeNull();
    expect(
      await authenticateUser(db, { email: "nobody@sluice.local", password: "correct-horse" }),
    ).toBeNull();
  });

  it("getSessionUser reads the current role, so a demotion takes effect on the next request", async () => {
    const user = await authenticateUser(db, { email: "owner@sluice.local", password: "correct-horse" });
    await db.user.update({ where: { id: user!.id }, data: { role: "viewer" } });
    expect(await getSessionUser(db, user!.id)).toMatchObject({ role: "viewer" });
    expect(await getSessionUser(db, "no-such-id")).toBeNull();
  });
});
