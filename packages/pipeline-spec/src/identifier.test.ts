import { describe, expect, it } from "vitest";
import {
  InvalidIdentifierError,
  assertIdentifier,
  identifierProblem,
  quoteIdentifier,
  quoteQualifiedName,
  splitQualifiedName,
  tableNameProblem,
} from "./identifier";

describe("identifiers", () => {
  it("accepts lowercase snake_case names up to 63 characters", () => {
    expect(identifierProblem("merchant_settlement_5m")).toBeUndefined();
    expect(identifierProblem("_rescued")).toBeUndefined();
    expect(identifierProblem("a".repeat(63))).toBeUndefined();
    expect(identifierProblem("a".repeat(64))).toMatch(/not a valid/);
  });

  it.each(["Payments", "9lives", "event-id", "a b", "x;y", 'x"y', "x--y", ""])("rejects %j", (name) => {
    expect(identifierProblem(name, "column")).toMatch(/not a valid column name/);
  });

  it("says that quotes, spaces and semicolons are never allowed when a name carries SQL", () => {
    expect(identifierProblem("users; drop table x", "table")).toMatch(
      /quotes, spaces, semicolons and comments are never allowed/,
    );
  });

  it("rejects SQL reserved words with a suggestion", () => {
    expect(identifierProblem("select", "column")).toMatch(/reserved word in SQL.*select_id/);
    expect(identifierProblem("user", "table")).toMatch(/reserved word/);
  });

  it("accepts schema-qualified table names and rejects system schemas", () => {
    expect(tableNameProblem("ledger.payments")).toBeUndefined();
    expect(tableNameProblem("pg_catalog.payments")).toMatch(/system schema/);
    expect(tableNameProblem("a.b.c")).toMatch(/schema\.table/);
    expect(tableNameProblem("x".repeat(49))).toMatch(/at most 48/);
  });

  it("rejects a table name with SQL in it", () => {
    expect(tableNameProblem("payments; DROP TABLE users; --")).toMatch(/not a valid table name/);
    expect(tableNameProblem('payments" OR 1=1')).toMatch(/not a valid table name/);
  });

  it("quotes only validated identifiers, with double quotes", () => {
    expect(quoteIdentifier("amount")).toBe('"amount"');
    expect(quoteIdentifier("window_start")).toBe('"window_start"');
    expect(quoteQualifiedName("ledger.payments")).toBe('"ledger"."payments"');
    expect(quoteQualifiedName("payments")).toBe('"payments"');
    expect(() => quoteIdentifier('a"; drop table x; --')).toThrow(InvalidIdentifierError);
    expect(() => quoteQualifiedName("a.b.c")).toThrow(InvalidIdentifierError);
    expect(() => assertIdentifier(42)).toThrow(/not a valid identifier/);
  });

  it("splits qualified names", () => {
    expect(splitQualifiedName("ledger.payments")).toEqual({ schema: "ledger", table: "payments" });
    expect(splitQualifiedName("payments")).toEqual({ schema: undefined, table: "payments" });
  });
});
