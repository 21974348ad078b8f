import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { PipelinesView } from "./pipelines-view";

export const metadata: Metadata = { title: "Pipelines" };

export default function PipelinesPage() {
  return (
    <>
      <PageHeader title="Pipelines">
        The fleet: every registered pipeline, its owner team and latest spec version. Status, input vs
        processing rate, backlog, freshness and firing alerts join this table as the engine reports them.
      </PageHeader>
      <PipelinesView />
    </>
  );
}
