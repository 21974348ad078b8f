import type { Metadata } from "next";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { hasRole } from "@sluice/services";

export const metadata: Metadata = { title: "Change requests" };

export default async function ChangeRequestsPage() {
  const user = await requireUser("/change-requests");
  return (
    <>
      <PageHeader title="Change requests">
        Changes that alter what a running pipeline accepts or where it reads from wait here for a second
        person.
      </PageHeader>
      <EmptyState
        title="No change requests"
        next={
          hasRole(user.role, "operator") ? (
            <>
              As an <strong>{user.role}</strong> you will be able to approve or reject other people&apos;s
              requests.
            </>
          ) : (
            <>
              As a <strong>viewer</strong> you can follow requests here; approving needs the operator role.
            </>
          )
        }
      >
        <p>
          Two kinds of request will appear: <strong>schema changes</strong> — a contract diff classified as
          compatible or breaking, with the sample rows that triggered it — and{" "}
          <strong>checkpoint resets</strong> (to earliest, latest, a timestamp or explicit offsets).
        </p>
        <p>
          A requester can never approve their own request. Approval applies the change safely (pause, apply,
          resume) and records it in the audit log.
        </p>
      </EmptyState>
    </>
  );
}
