// Which batch failures are retried: a retry helps only when the cause can go away by itself.
import { describe, expect, it } from "vitest";
import { ConfigurationError, isRetriable, RetriableError } from "./errors";

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code, severity: "ERROR" });

describe("isRetriable", () => {
  it("trusts engine and kafkajs errors", () => {
    expect(isRetriable(new RetriableError("broker hiccup"))).toBe(true);
    expect(isRetriable(new ConfigurationError("bad sink table"))).toBe(false);
    expect(isRetriable(Object.assign(new Error("leader not available"), { retriable: true }))).toBe(true);
    expect(isRetriable(Object.assign(new Error("topic authorization failed"), { retriable: false }))).toBe(
      false,
    );
  });

  it("judges a Postgres error by its SQLSTATE class", () => {
    for (const code of ["08006", "40001", "40P01", "53300", "55P03", "57P01", "57014", "58030"])
      expect(isRetriable(pgError(code)), code).toBe(true);
    for (const code of ["22P02", "23505", "42P01", "42501", "42703", "XX000"])
      expect(isRetriable(pgError(code)), code).toBe(false);
  });

  it("retries what it cannot classify", () => {
    expect(isRetriable(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe(
      true,
    );
    expect(isRetriable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isRetriable("a string")).toBe(true);
  });
});
