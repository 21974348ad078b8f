import { describe, expect, it } from "vitest";
import { safeReturnPath } from "./safe-return-path";

describe("safeReturnPath", () => {
  it("keeps same-site paths with their query", () => {
    expect(safeReturnPath("/alerts?state=firing")).toBe("/alerts?state=firing");
  });

  it("refuses anything that could leave the site, and loops back to sign-in", () => {
    for (const next of [
      "https://evil.example",
      "//evil.example",
      "/\\evil.example",
      "javascript:alert(1)",
      "/sign-in",
    ]) {
      expect(safeReturnPath(next)).toBe("/pipelines");
    }
    expect(safeReturnPath(undefined)).toBe("/pipelines");
    expect(safeReturnPath(["/audit", "/alerts"])).toBe("/audit");
  });
});
