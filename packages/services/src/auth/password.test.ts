import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "./password";

describe("password hashing", () => {
  it("verifies the password it hashed and rejects any other", async () => {
    const stored = await hashPassword("correct horse");
    expect(stored).toMatch(/^scrypt\$/);
    expect(stored).not.toContain("correct horse");
    expect(await verifyPassword("correct horse", stored)).toBe(true);
    expect(await verifyPassword("correct hors", stored)).toBe(false);
  });

  it("salts: the same password hashes differently twice", async () => {
    expect(await hashPassword("x")).not.toEqual(await hashPassword("x"));
  });

  it("rejects a malformed stored hash instead of throwing", async () => {
    expect(await verifyPassword("x", "plaintext")).toBe(false);
  });
});
