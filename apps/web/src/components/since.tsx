"use client";
// "since 12:03:04 (4.2 min ago)": the age needs the current time, which a render may not read (React
// renders must be pure: a re-render would show another age). The time is state, read once when the
// component mounts and then every few seconds, so the age also stays true between data refreshes.
import { useEffect, useState } from "react";
import { formatClock, formatMs } from "@/lib/format";

const TICK_MS = 5_000;

/** The current time (ms), advanced every few seconds while mounted. */
function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** A past instant as its clock time and how long ago it was. */
export function Since({ at }: { at: Date }) {
  const now = useNow();
  return (
    <>
      {formatClock(at)} ({formatMs(now - at.getTime())} ago)
    </>
  );
}

/** Only how long ago a past instant was ("8 s ago"), e.g. an offset sample's age. */
export function Ago({ at }: { at: Date }) {
  const now = useNow();
  return <>{formatMs(Math.max(0, now - at.getTime()))} ago</>;
}
