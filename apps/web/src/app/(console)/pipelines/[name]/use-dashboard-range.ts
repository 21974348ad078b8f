"use client";
// The range and version the pipeline page shows live in the URL (?range=1h, or ?from=…&to=… after a
// zoom or a custom range, and ?v=N for a version other than the serving one), so a zoom survives the
// page's refreshes and a reload, and a link shows a colleague the same picture.
import { RANGE_PRESETS, type TRangePreset } from "@sluice/services/signals/pure";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback } from "react";

export type TRangeChoice = { preset: TRangePreset } | { from: Date; to: Date };

export function useDashboardRange(): {
  range: TRangeChoice;
  version: number | undefined;
  setRange: (r: TRangeChoice) => void;
  setVersion: (v: number | undefined) => void;
} {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const from = params.get("from");
  const to = params.get("to");
  const preset = params.get("range");
  const v = Number(params.get("v"));
  const range: TRangeChoice =
    from && to && !Number.isNaN(Date.parse(from)) && !Number.isNaN(Date.parse(to))
      ? { from: new Date(from), to: new Date(to) }
      : { preset: preset && preset in RANGE_PRESETS ? (preset as TRangePreset) : "1h" };

  const update = useCallback(
    (change: (q: URLSearchParams) => void) => {
      const q = new URLSearchParams(params.toString());
      change(q);
      router.replace(`${pathname}${q.size > 0 ? `?${q}` : ""}`, { scroll: false });
    },
    [params, pathname, router],
  );
  const setRange = useCallback(
    (r: TRangeChoice) =>
      update((q) => {
        q.delete("range");
        q.delete("from");
        q.delete("to");
        if ("preset" in r) q.set("range", r.preset);
        else {
          q.set("from", r.from.toISOString());
          q.set("to", r.to.toISOString());
        }
      }),
    [update],
  );
  const setVersion = useCallback(
    (version: number | undefined) => update((q) => (version ? q.set("v", String(version)) : q.delete("v"))),
    [update],
  );
  return { range, version: Number.isInteger(v) && v > 0 ? v : undefined, setRange, setVersion };
}
