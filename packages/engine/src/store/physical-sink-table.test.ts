import { describe, expect, it } from "vitest";
import { physicalSinkTable, physicalSql, servingName } from "./physical-sink-table";

describe("physicalSinkTable", () => {
  it("names a version's table after the spec's, readable and apart from every other", () => {
    expect(physicalSinkTable("merchant_settlements", 1)).toBe("merchant_settlements@v1");
    expect(physicalSinkTable("public.merchant_settlements", 1)).toBe("merchant_settlements@v1");
    expect(physicalSinkTable("finance.ledger", 3)).toBe("finance.ledger@v3");
    expect(servingName("ledger")).toBe("public.ledger");
    expect(physicalSql("finance.ledger@v3")).toBe('"sluice_sinks"."finance.ledger@v3"');
  });

  it("cuts a long name to Postgres's 63 bytes with a hash, so two long names stay apart", () => {
    const a = physicalSinkTable(`${"x".repeat(60)}_a`, 7);
    const b = physicalSinkTable(`${"x".repeat(60)}_b`, 7);
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(63);
    expect(a).toMatch(/#[0-9a-f]{8}@v7$/);
    expect(a).not.toBe(b);
  });

  it("refuses to quote anything it did not make", () => {
    expect(() => physicalSql('x"; DROP TABLE users; --')).toThrow(/not a physical sink table name/);
  });
});
