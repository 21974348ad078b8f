import type { Metadata } from "next";
import { mayDoAction } from "@sluice/services";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { AlertsView } from "./alerts-view";

export const metadata: Metadata = { title: "Alerts" };

export default async function AlertsPage({
  searchParams,
}: {
  searchParams: Promise<{ pipeline?: string | string[] }>;
}) {
  const user = await requireUser("/alerts");
  const pipeline = (await searchParams).pipeline;
  return (
    <>
      <PageHeader title="Alerts">
        Firing and recent alerts across the fleet, problems first, routed to each pipeline owner&apos;s
        on-call. Acknowledge to stop reminders; silence to stop notifications for a while (the alert keeps
        being evaluated).
      </PageHeader>
      {/* Owners may respond for their own teams' pipelines only; the procedure decides per pipeline. */}
      <AlertsView
        canRespond={mayDoAction(user, "alert.respond")}
        initialPipeline={typeof pipeline === "string" ? pipeline : ""}
      />
    </>
  );
}
