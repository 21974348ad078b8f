import { parseSpec } from "@sluice/pipeline-spec";
import { describe, expect, it } from "vitest";
import { defaultDraftForm, draftFromForm, draftTemplate } from "./draft-template";
import { needsApproval } from "./needs-approval";

describe("the editor's starting points", () => {
  it("the template and both shapes of the form write specs that validate", () => {
    expect(parseSpec(draftTemplate({ owner: "risk", topic: "payments" }))).toMatchObject({
      ok: true,
      spec: { owner: "risk" },
    });
    const ledger = parseSpec(draftFromForm(defaultDraftForm()));
    expect(ledger).toMatchObject({
      ok: true,
      spec: { dedupe: { key: ["event_id"] }, sink: { postgres: { table: "my_pipeline" } } },
    });
    const windowed = parseSpec(draftFromForm({ ...defaultDraftForm(), shape: "windowed" }));
    expect(windowed).toMatchObject({
      ok: true,
      spec: {
        aggregate: {
          groupBy: ["merchant_id"],
          measures: { events: { fn: "count" }, amount: { fn: "sum", column: "amount" } },
        },
      },
    });
  });
});

describe("needsApproval", () => {
  const spec = (text: string) => {
    const r = parseSpec(text);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.spec;
  };
  const base = draftFromForm(defaultDraftForm());

  it("a first version and compatible contract changes apply directly", () => {
    expect(needsApproval(undefined, spec(base))).toEqual({ needed: false });
    expect(
      needsApproval(
        spec(base),
        spec(base.replace("    event_time: timestamp\n", "    event_time: timestamp\n    note: string?\n")),
      ),
    ).toEqual({ needed: false });
  });

  it("a breaking contract change needs approval, with its reasons", () => {
    const retyped = spec(base.replace("    seq: int\n", "    seq: string\n"));
    expect(needsApproval(spec(base), retyped)).toEqual({
      needed: true,
      reasons: [expect.stringMatching(/changes seq from int to string/)],
    });
  });
});
