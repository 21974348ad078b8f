import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { AuditLog } from "./audit-log";

export const metadata: Metadata = { title: "Audit" };

export default async function AuditPage() {
  await requireUser("/audit");
  return (
    <>
      <PageHeader title="Audit">
        Who changed what, when, why and from where: sign-ins and their failures, users and teams, pipeline
        registrations and lifecycle commands, webhook re-queues, change requests and every step of them.
        Entries are written by the actions themselves; the database refuses to change or delete them.
      </PageHeader>
      <AuditLog />
    </>
  );
}
