// Formatting for the pipeline page: counts with separators, bytes and durations (points in time are
// components/time.tsx, for every page).
const count = new Intl.NumberFormat("en-GB");

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : count.format(n);
}

export { formatBytes } from "@/charts/format";

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = s / 60;
  if (m < 60) return `${m.toFixed(m < 10 ? 1 : 0)} min`;
  const h = m / 60;
  return h < 48 ? `${h.toFixed(h < 10 ? 1 : 0)} h` : `${Math.round(h / 24)} d`;
}
