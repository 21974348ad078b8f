import type { Metadata } from "next";
import { mayDoAction } from "@sluice/services";
import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { PipelinesView } from "./pipelines-view";
import { WebhookDeliveries } from "./webhook-deliveries";

export const metadata: Metadata = { title: "Pipelines" };

export default async function PipelinesPage() {
  const user = await requireUser("/pipelines");
  return (
    <>
      <PageHeader title="Pipelines">
        The fleet, problems first: is anything failed or falling behind, since when, and is it losing data or
        only late. Open a pipeline for its graph, charts over any range, batches and checkpoint.
      </PageHeader>
      <div className="stack">
        {mayDoAction(user, "pipeline.register") ? (
          <p>
            <Link className="button button--primary" href="/pipelines/new">
              New pipeline
            </Link>
          </p>
        ) : null}
        <PipelinesView />
        {/* Owners may retry their own teams' pipelines only; the procedure decides per pipeline. */}
        <WebhookDeliveries canRetry={mayDoAction(user, "webhook.requeue")} />
      </div>
    </>
  );
}
