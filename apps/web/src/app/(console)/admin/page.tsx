import type { Metadata } from "next";
import { mayDoAction, ROLES } from "@sluice/services";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";
import { ssoConfig } from "@/server/auth/auth";
import { requireUser } from "@/server/auth/current-user";
import { SsoSection } from "./sso-section";
import { TeamsSection } from "./teams-section";
import { UsersSection } from "./users-section";

export const metadata: Metadata = { title: "Admin" };

export default async function AdminPage() {
  const user = await requireUser("/admin");
  if (!mayDoAction(user, "admin.users")) {
    return (
      <>
        <PageHeader title="Admin">People, teams and single sign-on.</PageHeader>
        <EmptyState
          title="Admins only"
          next={<>Ask an admin to change people, teams or the single sign-on mapping.</>}
        >
          This page manages people, teams and single sign-on; you are signed in as{" "}
          <strong>{user.role}</strong>.
        </EmptyState>
      </>
    );
  }
  const sso = ssoConfig();
  return (
    <>
      <PageHeader title="Admin">
        People, teams and single sign-on. Every change here is recorded in the audit log with who made it and
        the state before and after.
      </PageHeader>
      <div className="stack">
        <UsersSection selfId={user.id} roles={[...ROLES]} />
        <TeamsSection />
        <SsoSection
          roles={[...ROLES]}
          configured={sso ? { issuer: sso.issuer, groupsClaim: sso.groupsClaim } : null}
        />
      </div>
    </>
  );
}
