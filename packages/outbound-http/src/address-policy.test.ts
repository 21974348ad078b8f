import { describe, expect, it } from "vitest";
import { addressRefusal, parseAllowlist } from "./address-policy";

describe("addressRefusal", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.9", "private"],
    ["192.168.1.1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
  ])("refuses %s (%s) by default, saying how to allow it", (address, kind) => {
    const refusal = addressRefusal(address, 80, []);
    expect(refusal).toContain(kind);
    expect(refusal).toContain("SLUICE_OUTBOUND_ALLOW");
  });

  it.each(["93.184.215.14", "8.8.8.8", "2606:4700::1111"])("lets public %s through", (address) => {
    expect(addressRefusal(address, 443, [])).toBeUndefined();
  });

  it("an allowed address with a port allows that port only", () => {
    const allow = parseAllowlist("127.0.0.1:4010");
    expect(addressRefusal("127.0.0.1", 4010, allow)).toBeUndefined();
    expect(addressRefusal("127.0.0.1", 5432, allow)).toContain("loopback");
    expect(addressRefusal("::ffff:127.0.0.1", 4010, allow)).toBeUndefined();
  });

  it("an allowed range allows every address in it, on any port", () => {
    const allow = parseAllowlist("10.20.0.0/16, [fd00::5]:8443");
    expect(addressRefusal("10.20.3.4", 9000, allow)).toBeUndefined();
    expect(addressRefusal("10.21.0.1", 9000, allow)).toContain("private");
    expect(addressRefusal("fd00::5", 8443, allow)).toBeUndefined();
    expect(addressRefusal("fd00::5", 8444, allow)).toContain("private");
  });

  it("a malformed allowlist entry is an error that shows the accepted forms", () => {
    expect(() => parseAllowlist("127.0.0.1:4010, localhost")).toThrow(
      /"localhost" is not an address or CIDR range.*127\.0\.0\.1:4010/,
    );
    expect(() => parseAllowlist("127.0.0.1:70000")).toThrow(/port outside/);
  });
});
