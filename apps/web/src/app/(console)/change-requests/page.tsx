import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { ChangeRequestList } from "./change-request-list";

export const metadata: Metadata = { title: "Change requests" };

export default async function ChangeRequestsPage() {
  await requireUser("/change-requests");
  return (
    <>
      <PageHeader title="Change requests">
        Changes that alter where a running pipeline reads from wait here for a second person: the requester
        can never approve their own request, whatever their role. Each shows its impact before anyone approves
        it; every step is in the audit log.
      </PageHeader>
      <ChangeRequestList />
    </>
  );
}
