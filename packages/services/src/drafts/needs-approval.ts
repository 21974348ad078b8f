// Which registrations need someone else's approval instead of applying directly. Change requests exist
// (change-requests/), but a schema change request cannot be applied yet; until it can, this is the one
// place that decides, and the console refuses such a change with what it needs. Wiring it to
// requestSchemaChange later means replacing the refusal, not finding every caller.
import { classifyContractChange, type TPipelineSpec } from "@sluice/spec";

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
    "A schema change request cannot be applied from this console yet (checkpoint resets can): make the change compatible (e.g. add a new field as optional, with ?), or register it from the CLI (npx sluice start <spec.yaml> \"<why>\"), where its owner takes responsibility for the migration.",
  ].join("\n");
}
