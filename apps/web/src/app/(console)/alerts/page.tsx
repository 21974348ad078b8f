import type { Metadata } from "next";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";

export const metadata: Metadata = { title: "Alerts" };

export default function AlertsPage() {
  return (
    <>
      <PageHeader title="Alerts">
        Firing and recent alerts across the fleet, routed to each pipeline owner&apos;s on-call.
      </PageHeader>
      <EmptyState
        title="No alerts yet"
        next={
          <>
            Next: register a pipeline on the Pipelines page — alerting rules and notification hooks are part
            of an upcoming release.
          </>
        }
      >
        <p>
          Alert rules will live with each pipeline, with sensible defaults: backlog growing while input is
          steady, processing rate below input rate, freshness over its SLA, expectation violations over a
          threshold, batch failures, and state or dead-letter growth.
        </p>
        <p>
          A firing alert will show here with its pipeline, its owner team and when it started; operators will
          be able to acknowledge, silence and resolve it, and its history is kept.
        </p>
      </EmptyState>
    </>
  );
}
