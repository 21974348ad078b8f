// Which registrations need someone else's approval instead of applying directly: this is the one place
// that decides. The console refuses such a registration with what it needs and offers to raise a
// schema change request from the same draft (change-requests/request-schema-change.ts); an operator's
// approval then registers it at a batch boundary (apply-schema-change.ts).
import { classifyContractChange, type TPipelineSpec } from "@sluice/pipeline-spec";

export type TApproval = { needed: false } | { needed: true; reasons: string[] };

/** A breaking contract change (rows accepted before would now be refused or change meaning) needs approval. */
export function needsApproval(previous: TPipelineSpec | undefined, next: TPipelineSpec): TApproval {
  if (!previous) return { needed: false };
  const contract = classifyContractChange(previous.contract, next.contract);
  if (contract.compatibility === "compatible") return { needed: false };
  return { needed: true, reasons: contract.changes.filter((c) => !c.compatible).map((c) => c.reason) };
}

export function approvalRefusal(name: string, approval: Extract<TApproval, { needed: true }>): string {
  return [
    `${name}: this version changes the contract in a way that needs a change request approved by someone else, so nothing was registered:`,
    ...approval.reasons.map((r) => `  - ${r}`),
    "Request approval: a schema change request is raised from this draft, and once an operator approves it the new version is registered at a batch boundary, continuing from the same offsets. Or make the change compatible (e.g. add a new field as optional, with ?).",
  ].join("\n");
}
