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
        The fleet: every registered pipeline, its owner team and latest spec version. Status, input vs
        processing rate, backlog, freshness and firing alerts join this table as the engine reports them.
      </PageHeader>
      <div className="stack">
        <PipelinesView />
        <WebhookDeliveries canRetry={hasRole(user.role, "operator")} />
      </div>
    </>
  );
}
