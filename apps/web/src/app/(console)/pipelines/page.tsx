import type { Metadata } from "next";
import { hasRole } from "@sluice/services";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/session/current-user";
import { PipelinesView } from "./pipelines-view";
import { WebhookDeliveries } from "./webhook-deliveries";

export const metadata: Metadata = { title: "Pipelines" };

export default async function PipelinesPage() {
  const user = await requireUser("/pipelines");
  return (
    <>
      <PageHeader title="Pipelines">
        The fleet: every registered pipeline, its owner team and latest spec version. Open a pipeline for what
        the engine reports: run state, the latest batch with each partition&apos;s event time, recent batches and
        dead letters. Status, rates, backlog, freshness and firing alerts join this table later.
      </PageHeader>
      <div className="stack">
        <PipelinesView />
        <WebhookDeliveries canRetry={hasRole(user.role, "operator")} />
      </div>
    </>
  );
}
