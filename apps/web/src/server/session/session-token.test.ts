import { describe, expect, it } from "vitest";
import { signSessionToken, verifySessionToken } from "./session-token";

const secret = "a".repeat(48);
const claims = { userId: "user_1", expiresAt: 2_000_000_000_000 };

describe("session token", () => {
  it("round-trips the claims it signed", () => {
    expect(verifySessionToken(signSessionToken(claims, secret), secret, 1_000)).toEqual(claims);
  });

  it("a token signed with another secret is refused", () => {
    expect(verifySessionToken(signSessionToken(claims, "b".repeat(48)), secret, 1_000)).toBeNull();
  });

  it("a token whose payload was edited (e.g. another user id) is refused", () => {
    const [v, , mac] = signSessionToken(claims, secret).split(".");
    const forged = Buffer.from(JSON.stringify({ ...claims, userId: "admin" })).toString("base64url");
    expect(verifySessionToken(`${v}.${forged}.${mac}`, secret, 1_000)).toBeNull();
  });

  it("an expired token is refused", () => {
    const token = signSessionToken(claims, secret);
    expect(verifySessionToken(token, secret, claims.expiresAt)).toBeNull();
  });

  it("garbage and missing cookies are refused without throwing", () => {
    for (const token of [undefined, "", "v1", "v1..", "v2.e30.AAAA", "v1.bm90LWpzb24.AAAA", "a.b.c.d"]) {
      expect(verifySessionToken(token, secret, 1_000)).toBeNull();
    }
  });
});
