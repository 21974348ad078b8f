import { describe, expect, it } from "vitest";
import {
  clearSessionCookie,
  isHttpsRequest,
  readSessionCookie,
  serializeSessionCookie,
} from "./session-cookie";

describe("session cookie", () => {
  it("is HttpOnly and SameSite=Lax, and Secure only over HTTPS", () => {
    const plain = serializeSessionCookie("tok", { maxAgeSeconds: 60, secure: false });
    expect(plain).toBe("sluice_session=tok; Path=/; HttpOnly; SameSite=Lax; Max-Age=60");
    expect(serializeSessionCookie("tok", { maxAgeSeconds: 60, secure: true })).toMatch(/; Secure$/);
    expect(clearSessionCookie(false)).toContain("Max-Age=0");
  });

  it("is found among other cookies", () => {
    expect(readSessionCookie("a=1; sluice_session=v1.x.y; b=2")).toBe("v1.x.y");
    expect(readSessionCookie("sluice_session_other=1")).toBeUndefined();
    expect(readSessionCookie(null)).toBeUndefined();
  });

  it("HTTPS is recognised behind a TLS-terminating proxy", () => {
    expect(isHttpsRequest(new Request("http://app/", { headers: { "x-forwarded-proto": "https" } }))).toBe(
      true,
    );
    expect(isHttpsRequest(new Request("http://127.0.0.1:3000/"))).toBe(false);
  });
});
