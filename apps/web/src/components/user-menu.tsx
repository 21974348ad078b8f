"use client";
import { useMutation } from "@tanstack/react-query";
import type { TRole } from "@sluice/services";
import { useTRPC } from "@/trpc/react";

export function UserMenu({ name, email, role }: { name: string; email: string; role: TRole }) {
  const trpc = useTRPC();
  const signOut = useMutation(
    // Whatever the answer (even an already-expired session), leave for the sign-in page with a
    // full navigation so no cached query data outlives the session.
    trpc.auth.signOut.mutationOptions({ onSettled: () => window.location.assign("/sign-in") }),
  );
  return (
    <div className="user" data-testid="signed-in-user">
      <div className="user__who">
        <span className="user__name">{name}</span>
        <span className={`role role--${role}`}>{role}</span>
      </div>
      <div className="user__email muted">{email}</div>
      <button
        className="button button--ghost"
        type="button"
        onClick={() => signOut.mutate()}
        disabled={signOut.isPending}
      >
        Sign out
      </button>
    </div>
  );
}
