// Every console page: signed-in users only (the role itself is checked by each tRPC procedure).
import type { ReactNode } from "react";
import { ConsoleNav } from "@/components/console-nav";
import { ServiceStatus } from "@/components/service-status";
import { SessionGuard } from "@/components/session-guard";
import { UserMenu } from "@/components/user-menu";
import { requireUser } from "@/server/auth/current-user";

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const user = await requireUser("/pipelines");
  return (
    <div className="shell">
      <aside className="shell__sidebar">
        <div className="brand">
          <span className="brand__mark" aria-hidden>
            ≋
          </span>{" "}
          Sluice
        </div>
        <ConsoleNav admin={user.role === "admin"} />
        <div className="shell__sidebar-footer">
          <ServiceStatus />
          <UserMenu name={user.name} email={user.email} role={user.role} />
        </div>
      </aside>
      <main className="shell__main">
        <SessionGuard />
        {children}
      </main>
    </div>
  );
}
