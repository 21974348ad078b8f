// One point in time as the console shows it (pipeline pages, change requests, the audit log): local,
// with the exact instant in the title.
import { formatTime } from "@/lib/format";

/** A point in time, local; the exact instant (UTC) in the title. */
export function Time({ value }: { value: Date | null | undefined }) {
  if (!value) return <>—</>;
  const iso = value.toISOString();
  return (
    <time dateTime={iso} title={iso}>
      {formatTime(value)}
    </time>
  );
}
