// `name`, `name@2` and `--version 2` name a pipeline version; anything else is refused with what to
// write, never read as another version.
import { describe, expect, it } from "vitest";
import { parsePipelineTarget } from "./pipeline-target";

describe("parsePipelineTarget", () => {
  it("reads a name, name@N and --version N", () => {
    expect(parsePipelineTarget("orders")).toEqual({ name: "orders" });
    expect(parsePipelineTarget("orders@2")).toEqual({ name: "orders", version: 2 });
    expect(parsePipelineTarget("orders", "12")).toEqual({ name: "orders", version: 12 });
    expect(parsePipelineTarget("orders@3", "3")).toEqual({ name: "orders", version: 3 });
  });

  it("refuses what is not a version, naming what to write", () => {
    expect(parsePipelineTarget("orders@")).toEqual({
      error: 'orders@: write the version as a number after "@", e.g. orders@2',
    });
    expect(parsePipelineTarget("orders@two")).toMatchObject({ error: expect.stringContaining("orders@2") });
    expect(parsePipelineTarget("orders@0")).toMatchObject({ error: expect.stringContaining("a number") });
    expect(parsePipelineTarget("orders@-1")).toMatchObject({ error: expect.stringContaining("a number") });
    expect(parsePipelineTarget("orders", "1.5")).toEqual({
      error: "--version 1.5: a version is a number from 1, e.g. --version 2",
    });
    expect(parsePipelineTarget("@2")).toEqual({
      error: '@2: name the pipeline before "@", e.g. payments-ledger@2',
    });
    expect(parsePipelineTarget("orders@2", "3")).toEqual({
      error: "orders@2 and --version 3 name different versions: give one",
    });
  });
});
