import { formatTime } from "./format";

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
