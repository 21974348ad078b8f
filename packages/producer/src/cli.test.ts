// The CLI as a process: exit codes and messages for --help and bad input (no Kafka needed).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), "cli.ts");
const run = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", cli, ...args], { encoding: "utf8", timeout: 60_000 });

// Each case starts node + tsx, which takes seconds on a busy machine.
describe("sluice-producer CLI", { timeout: 60_000 }, () => {
  it("--help prints usage and exits 0", () => {
    const r = run("--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage: sluice-producer");
    expect(r.stdout).toContain("--out-of-order");
  });

  it("bad input: one clear line on stderr and exit 2", () => {
    const r = run("--duplicates", "2");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--duplicates: expected a share in [0, 1]");
    expect(r.stdout).toBe("");
  });

  it("unknown option: exit 2", () => {
    expect(run("--nope").status).toBe(2);
  });
});
