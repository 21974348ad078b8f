import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { db } from "@/server/db";
import { ChangePasswordForm } from "./change-password-form";

export const metadata: Metadata = { title: "Account" };

export default async function AccountPage() {
  const user = await requireUser("/account");
  const signIns = await db().account.findMany({ where: { userId: user.id }, select: { providerId: true } });
  const hasPassword = signIns.some((a) => a.providerId === "credential");
  return (
    <>
      <PageHeader title="Account">
        Who you are signed in as, what that lets you do, and your password.
      </PageHeader>
      <div className="stack">
        <section className="panel">
          <h2 className="panel__title">You</h2>
          <dl className="facts">
            <dt>Name</dt>
            <dd>{user.name}</dd>
            <dt>Email</dt>
            <dd>{user.email}</dd>
            <dt>Role</dt>
            <dd>
              <span className={`role role--${user.role}`}>{user.role}</span>
            </dd>
            <dt>Teams</dt>
            <dd data-testid="account-teams">
              {user.teams.length > 0 ? user.teams.map((t) => t.name).join(", ") : "none"}
            </dd>
            <dt>Signs in with</dt>
            <dd>
              {[
                hasPassword ? "password" : null,
                signIns.some((a) => a.providerId === "sso") ? "single sign-on" : null,
              ]
                .filter(Boolean)
                .join(", ")}
            </dd>
          </dl>
        </section>
        <section className="panel">
          <h2 className="panel__title">Password</h2>
          {hasPassword ? (
            <ChangePasswordForm />
          ) : (
            <p className="muted">
              You sign in with single sign-on; your identity provider manages your password.
            </p>
          )}
        </section>
      </div>
    </>
  );
}
