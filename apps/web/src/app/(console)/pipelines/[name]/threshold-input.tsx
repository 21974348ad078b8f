"use client";
// A rule's threshold as typed into the rule forms, with what it means beside it ("share, 0–1").
import { thresholdUnit, type TRuleKind } from "@sluice/services/alerts/pure";

export function ThresholdInput(p: {
  kind: TRuleKind;
  value: string;
  onChange: (v: string) => void;
  label: string;
  placeholder: string;
  disabled?: boolean;
}) {
  return (
    <>
      <input
        type="text"
        inputMode="decimal"
        size={7}
        value={p.value}
        onChange={(e) => p.onChange(e.target.value)}
        disabled={p.disabled}
        aria-label={p.label}
        placeholder={p.placeholder}
      />{" "}
      <span className="muted small">{thresholdUnit(p.kind)}</span>
    </>
  );
}
