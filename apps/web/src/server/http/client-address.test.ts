// The client address from the socket and SLUICE_TRUSTED_PROXIES: what a spoofing client can and
// cannot change.
import { describe, expect, it } from "vitest";
import {
  NO_TRUSTED_PROXIES,
  parseTrustedProxies,
  resolveClientAddress,
  settleForwardedHeaders,
} from "./client-address";

describe("client address", () => {
  it("with no trusted proxy, the socket's address whatever the headers say", () => {
    expect(resolveClientAddress("192.0.2.10", "203.0.113.1", NO_TRUSTED_PROXIES)).toBe("192.0.2.10");
    expect(resolveClientAddress("::ffff:192.0.2.10", undefined, NO_TRUSTED_PROXIES)).toBe("192.0.2.10");
  });

  it("behind trusted proxies, the rightmost hop that is not one of them", () => {
    const trusted = parseTrustedProxies("10.0.0.0/8, fd00::/8");
    expect(resolveClientAddress("10.0.0.2", "1.1.1.1, 198.51.100.4, 10.0.0.7", trusted)).toBe("198.51.100.4");
    expect(resolveClientAddress("fd00::1", "198.51.100.4", trusted)).toBe("198.51.100.4");
    // Only proxies forwarded: the leftmost one is the client.
    expect(resolveClientAddress("10.0.0.2", "10.0.0.9", trusted)).toBe("10.0.0.9");
    // A proxy that forwarded nothing: the proxy itself.
    expect(resolveClientAddress("10.0.0.2", undefined, trusted)).toBe("10.0.0.2");
    // Garbage in the chain stops the walk at the last honest address.
    expect(resolveClientAddress("10.0.0.2", "198.51.100.4, not-an-ip", trusted)).toBe("10.0.0.2");
    // An untrusted peer's chain is ignored entirely.
    expect(resolveClientAddress("192.0.2.1", "198.51.100.4", trusted)).toBe("192.0.2.1");
  });

  it("a setting that is not addresses or CIDR ranges is refused, naming the entry", () => {
    expect(() => parseTrustedProxies("10.0.0.1, proxy.internal")).toThrow(
      /"proxy\.internal" is not an IP address or CIDR range/,
    );
    expect(() => parseTrustedProxies("10.0.0.0/33")).toThrow(/"10\.0\.0\.0\/33"/);
    expect(parseTrustedProxies(" ").entries).toEqual([]);
  });

  it("an untrusted peer's forwarding headers are dropped and X-Forwarded-For is the socket's address", () => {
    const headers = {
      host: "console",
      "x-forwarded-for": "203.0.113.1",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "evil.example",
      "x-real-ip": "203.0.113.2",
      forwarded: "for=203.0.113.3",
    };
    expect(settleForwardedHeaders(headers, "192.0.2.10", NO_TRUSTED_PROXIES)).toBe("192.0.2.10");
    expect(headers).toEqual({ host: "console", "x-forwarded-for": "192.0.2.10" });
  });

  it("a trusted proxy's scheme and host are kept; X-Forwarded-For is reduced to the client", () => {
    const headers = { "x-forwarded-for": "203.0.113.1, 10.0.0.7", "x-forwarded-proto": "https" };
    settleForwardedHeaders(headers, "10.0.0.2", parseTrustedProxies("10.0.0.0/8"));
    expect(headers).toEqual({ "x-forwarded-for": "203.0.113.1", "x-forwarded-proto": "https" });
  });
});
