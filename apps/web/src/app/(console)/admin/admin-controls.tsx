"use client";
// What the Admin page's sections share: each change refreshes the admin queries and shows its
// outcome in place (a confirmation, or the server's message naming the fix); the role and team pickers.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { TRole } from "@sluice/services";
import { useState } from "react";
import { useTRPC } from "@/trpc/react";

export function useAdminRefresh() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.admin.pathKey() });
}

export function useOutcome() {
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  return {
    outcome,
    ok: (text: string) => setOutcome({ ok: true, text }),
    fail: (err: { message: string }) => setOutcome({ ok: false, text: err.message }),
  };
}

export function Outcome({ outcome }: { outcome: { ok: boolean; text: string } | null }) {
  if (!outcome) return null;
  return (
    <p className={outcome.ok ? "notice" : "form__error"} role={outcome.ok ? "status" : "alert"}>
      {outcome.text}
    </p>
  );
}

/** The labelled role and team pickers the add-person and map-a-group forms share. */
export function RoleField({
  roles,
  value,
  onChange,
}: {
  roles: TRole[];
  value: TRole;
  onChange: (role: TRole) => void;
}) {
  return (
    <label>
      <span>Role</span>
      <select aria-label="Role" value={value} onChange={(e) => onChange(e.target.value as TRole)}>
        {roles.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
    </label>
  );
}

export function TeamField({
  teams,
  value,
  onChange,
  none,
}: {
  teams: { id: string; name: string }[];
  value: string;
  onChange: (teamId: string) => void;
  none: string;
}) {
  return (
    <label>
      <span>Team</span>
      <select aria-label="Team" value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{none}</option>
        {teams.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </select>
    </label>
  );
}

export { useMutation };
