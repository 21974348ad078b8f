// Is a contract change safe to apply without a migration? Compatible changes keep every row that was
// accepted before accepted, with the same meaning; breaking ones need an approval and a plan.
import type { TContract } from "./contract";

export interface TContractChange {
  field?: string;
  kind:
    "field-added" | "field-removed" | "type-changed" | "made-required" | "made-optional" | "policy-changed";
  compatible: boolean;
  reason: string;
}

export interface TContractClassification {
  compatibility: "compatible" | "breaking";
  changes: TContractChange[];
}

const UNKNOWN_FIELD_STRICTNESS = { rescue: 0, quarantine: 1, reject: 2 } as const;
const TYPE_MISMATCH_STRICTNESS = { quarantine: 0, reject: 1 } as const;

export function classifyContractChange(before: TContract, after: TContract): TContractClassification {
  const changes: TContractChange[] = [];
  const names = [...new Set([...Object.keys(before.fields), ...Object.keys(after.fields)])].sort();
  for (const field of names) {
    const [was, now] = [before.fields[field], after.fields[field]];
    if (!was && now) {
      changes.push(
        now.optional
          ? {
              field,
              kind: "field-added",
              compatible: true,
              reason: `adds optional field ${field} (${now.type}): rows without it stay valid`,
            }
          : {
              field,
              kind: "field-added",
              compatible: false,
              reason: `adds required field ${field} (${now.type}): rows from producers that do not send it yet would be quarantined; add it as ${field}: ${now.type}? first`,
            },
      );
    } else if (was && !now) {
      changes.push({
        field,
        kind: "field-removed",
        compatible: false,
        reason: `removes field ${field}: its sink column and any expression or key that uses it lose their data`,
      });
    } else if (was && now) {
      if (was.type !== now.type) {
        changes.push({
          field,
          kind: "type-changed",
          compatible: false,
          reason: `changes ${field} from ${was.type} to ${now.type}: the sink column's type changes and rows typed the old way would be quarantined`,
        });
      }
      if (was.optional && !now.optional) {
        changes.push({
          field,
          kind: "made-required",
          compatible: false,
          reason: `makes ${field} required: rows without it would be quarantined`,
        });
      } else if (!was.optional && now.optional) {
        changes.push({
          field,
          kind: "made-optional",
          compatible: true,
          reason: `makes ${field} optional: every row accepted before is still accepted`,
        });
      }
    }
  }
  if (before.onUnknownField !== after.onUnknownField) {
    const stricter =
      UNKNOWN_FIELD_STRICTNESS[after.onUnknownField] > UNKNOWN_FIELD_STRICTNESS[before.onUnknownField];
    changes.push({
      kind: "policy-changed",
      compatible: !stricter,
      reason: `onUnknownField ${before.onUnknownField} → ${after.onUnknownField}${stricter ? ": rows with unknown fields that were kept would now be diverted" : ""}`,
    });
  }
  if (before.onTypeMismatch !== after.onTypeMismatch) {
    const stricter =
      TYPE_MISMATCH_STRICTNESS[after.onTypeMismatch] > TYPE_MISMATCH_STRICTNESS[before.onTypeMismatch];
    changes.push({
      kind: "policy-changed",
      compatible: !stricter,
      reason: `onTypeMismatch ${before.onTypeMismatch} → ${after.onTypeMismatch}${stricter ? ": mismatched rows would become dead letters instead of replayable quarantine" : ""}`,
    });
  }
  return { compatibility: changes.every((c) => c.compatible) ? "compatible" : "breaking", changes };
}
