"use client";
import Link from "next/link";
import { useState } from "react";
import type { TRole } from "@sluice/services";
import { authClient } from "@/lib/auth-client";
import { markSigningOut } from "@/lib/signing-out";

export function UserMenu({ name, email, role }: { name: string; email: string; role: TRole }) {
  const [signingOut, setSigningOut] = useState(false);
  // Whatever the answer (even an already-expired session), leave for the sign-in page with a full
  // navigation so no cached query data outlives the session.
  const signOut = async () => {
    setSigningOut(true);
    markSigningOut();
    await authClient.signOut().catch(() => undefined);
    window.location.assign("/sign-in");
  };
  return (
    <div className="user" data-testid="signed-in-user">
      <div className="user__who">
        <span className="user__name">{name}</span>
        <span className={`role role--${role}`}>{role}</span>
      </div>
      <div className="user__email muted">{email}</div>
      <Link className="user__account small" href="/account">
        Account and password
      </Link>
      <button className="button button--ghost" type="button" onClick={signOut} disabled={signingOut}>
        Sign out
      </button>
    </div>
  );
}
