import type { Metadata } from "next";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";

export const metadata: Metadata = { title: "Audit" };

export default function AuditPage() {
  return (
    <>
      <PageHeader title="Audit">Who changed what, when, and with whose approval.</PageHeader>
      <EmptyState
        title="No audit entries yet"
        next={<>Nothing to do here: entries are written by the actions themselves and cannot be edited.</>}
      >
        <p>
          Every operator action will be recorded here: pipeline registrations and new versions, pauses and
          resumes, dead-letter replays, approvals and rejections of change requests, checkpoint resets,
          rollout promotions and rollbacks, and alert acknowledgements.
        </p>
      </EmptyState>
    </>
  );
}
