import { describe, expect, it } from "vitest";
import { hasRole, ROLES } from "./roles";

describe("role ladder", () => {
  it("every role satisfies itself and every role below it", () => {
    ROLES.forEach((role, i) => {
      for (const lower of ROLES.slice(0, i + 1)) expect(hasRole(role, lower)).toBe(true);
    });
  });

  it("no role satisfies a role above it", () => {
    expect(hasRole("viewer", "operator")).toBe(false);
    expect(hasRole("operator", "owner")).toBe(false);
    expect(hasRole("owner", "admin")).toBe(false);
  });
});
