import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSessionSecret } from "./session-secret";

describe("resolveSessionSecret", () => {
  it("an explicit SLUICE_SESSION_SECRET wins", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sluice-secret-"));
    expect(resolveSessionSecret({ SLUICE_SESSION_SECRET: "x".repeat(32), SLUICE_DATA_DIR: dir })).toBe(
      "x".repeat(32),
    );
  });

  it("without one, a generated key is persisted (owner-only) and reused after a restart", () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "sluice-secret-")), ".data");
    const generated: string[] = [];
    const first = resolveSessionSecret({ SLUICE_DATA_DIR: dir }, (file) => generated.push(file));
    const second = resolveSessionSecret({ SLUICE_DATA_DIR: dir }, (file) => generated.push(file));
    expect(first.length).toBeGreaterThanOrEqual(64);
    expect(second).toBe(first);
    expect(generated).toHaveLength(1);
    const file = path.join(dir, "session-secret");
    expect(readFileSync(file, "utf8")).toBe(first);
    expect(statSync(file).mode & 0o077).toBe(0);
  });
});
