"use client";
// When a session expires while a page is open, the next tRPC query answers UNAUTHORIZED; send the
// user to sign in (and back here afterwards) instead of leaving a page of errors.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { isSigningOut } from "@/lib/signing-out";

export function SessionGuard() {
  const queryClient = useQueryClient();
  useEffect(
    () =>
      queryClient.getQueryCache().subscribe((event) => {
        const code = (event.query.state.error as { data?: { code?: string } } | null)?.data?.code;
        if (event.type === "updated" && code === "UNAUTHORIZED" && !isSigningOut()) {
          const here = `${window.location.pathname}${window.location.search}`;
          window.location.assign(`/sign-in?next=${encodeURIComponent(here)}`);
        }
      }),
    [queryClient],
  );
  return null;
}
