// How the console's values read — rates, counts, durations, bytes, shares and points in time — in
// charts, components and pages alike: one module, so a number reads the same wherever it is shown.
const compact = new Intl.NumberFormat("en-GB", { notation: "compact", maximumFractionDigits: 1 });
const exact = new Intl.NumberFormat("en-GB", { maximumFractionDigits: 2 });
const clock = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit" });
const dayClock = new Intl.DateTimeFormat("en-GB", {
  day: "2-digit",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
});
const full = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "medium" });
const hms = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" });

export type TUnit = "rate" | "count" | "ms" | "bytes" | "share";

export function formatValue(v: number | null | undefined, unit: TUnit, precise = false): string {
  if (v === null || v === undefined || Number.isNaN(v)) return "—";
  switch (unit) {
    case "rate":
      return `${precise ? exact.format(v) : compact.format(v)}/s`;
    case "count":
      return precise ? exact.format(v) : compact.format(v);
    case "ms":
      return formatMs(v);
    case "bytes":
      return formatBytes(v);
    case "share":
      return `${(v * 100).toFixed(v < 0.001 && v > 0 ? 3 : v < 0.1 ? 2 : 1)}%`;
  }
}

/** A count with separators (12,345), "—" for none. */
export function formatCount(n: number | null | undefined): string {
  return formatValue(n, "count", true);
}

/** A duration: 850 ms, 4.2 s, 12 s, 3.5 min, 2.0 h, 2.5 d; "—" for none. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(ms)} ms`;
  if (a < 60_000) return `${(ms / 1000).toFixed(a < 10_000 ? 1 : 0)} s`;
  if (a < 3600_000) return `${(ms / 60_000).toFixed(a < 600_000 ? 1 : 0)} min`;
  if (a < 48 * 3600_000) return `${(ms / 3600_000).toFixed(1)} h`;
  return `${(ms / 86_400_000).toFixed(1)} d`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** An axis tick: seconds for ranges under half an hour, the clock within a day, the day too beyond. */
export function formatTick(t: number, spanMs: number): string {
  return spanMs > 24 * 3600_000 ? dayClock.format(t) : spanMs < 30 * 60_000 ? hms.format(t) : clock.format(t);
}

/** A time of day (today's events on the fleet row). */
export function formatClock(t: number | Date): string {
  return hms.format(t);
}

export function formatInstant(t: number | Date): string {
  return full.format(t);
}

/** A date and time, local (medium style), "—" for none: the console's <Time> (components/time.tsx). */
export function formatTime(d: Date | null | undefined): string {
  return d ? full.format(d) : "—";
}
