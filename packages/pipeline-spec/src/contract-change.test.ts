import { describe, expect, it } from "vitest";
import { classifyContractChange } from "./contract-change";
import { ZContract, type TContractInput } from "./contract";

const contract = (fields: TContractInput["fields"], extra: Partial<TContractInput> = {}) =>
  ZContract.parse({ fields, ...extra });
const base = contract({ event_id: "string", amount: "decimal", seq: "int?" });

describe("classifyContractChange", () => {
  it("calls an unchanged contract compatible with no changes", () => {
    expect(classifyContractChange(base, base)).toEqual({ compatibility: "compatible", changes: [] });
  });

  it("calls adding an optional field compatible", () => {
    const result = classifyContractChange(
      base,
      contract({ event_id: "string", amount: "decimal", seq: "int?", campaign: "string?" }),
    );
    expect(result).toEqual({
      compatibility: "compatible",
      changes: [
        {
          field: "campaign",
          kind: "field-added",
          compatible: true,
          reason: expect.stringMatching(/adds optional field campaign/),
        },
      ],
    });
  });

  it("calls making a required field optional compatible", () => {
    expect(
      classifyContractChange(base, contract({ event_id: "string", amount: "decimal?", seq: "int?" }))
        .compatibility,
    ).toBe("compatible");
  });

  it.each([
    [
      "adding a required field",
      { event_id: "string", amount: "decimal", seq: "int?", campaign: "string" },
      "field-added",
      /rows from producers that do not send it yet would be quarantined/,
    ],
    ["removing a field", { event_id: "string", amount: "decimal" }, "field-removed", /removes field seq/],
    [
      "changing a type",
      { event_id: "string", amount: "double", seq: "int?" },
      "type-changed",
      /changes amount from decimal to double/,
    ],
    [
      "making an optional field required",
      { event_id: "string", amount: "decimal", seq: "int" },
      "made-required",
      /makes seq required/,
    ],
  ] as const)("calls %s breaking, with the reason", (_, fields, kind, reason) => {
    const result = classifyContractChange(base, contract(fields));
    expect(result.compatibility).toBe("breaking");
    expect(result.changes).toContainEqual(
      expect.objectContaining({ kind, compatible: false, reason: expect.stringMatching(reason) }),
    );
  });

  it("calls a stricter unknown-field or type-mismatch policy breaking and a looser one compatible", () => {
    const strict = contract(base.fields, { onUnknownField: "reject", onTypeMismatch: "reject" });
    expect(classifyContractChange(base, strict).compatibility).toBe("breaking");
    expect(classifyContractChange(strict, base)).toMatchObject({
      compatibility: "compatible",
      changes: [{ kind: "policy-changed" }, { kind: "policy-changed" }],
    });
  });
});
