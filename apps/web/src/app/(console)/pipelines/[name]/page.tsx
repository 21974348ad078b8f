import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { authorizeAction, mayDoAction } from "@sluice/services";
import { PageHeader } from "@/components/page-header";
import { pipelineName } from "./links";
import { requireUser } from "@/server/auth/current-user";
import { db } from "@/server/db";
import { PipelineDetail } from "./pipeline-detail";

type TProps = { params: Promise<{ name: string }> };

export async function generateMetadata({ params }: TProps): Promise<Metadata> {
  return { title: pipelineName((await params).name) };
}

export default async function PipelinePage({ params }: TProps) {
  const name = pipelineName((await params).name);
  const user = await requireUser(`/pipelines/${encodeURIComponent(name)}`);
  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link href="/pipelines">Pipelines</Link> <span aria-hidden>/</span>{" "}
        <span className="mono">{name}</span>
      </nav>
      <PageHeader title={name}>
        Is it broken, since when, and is it losing data or only late: its run state, freshness, completeness
        and correctness, the pipeline as a graph with the rows on every edge, every signal over time, the
        checkpoint per partition, recent batches and dead letters. Live while the tab is open.
      </PageHeader>
      <Suspense fallback={<p className="muted">Loading the pipeline…</p>}>
        <PipelineDetail
          name={name}
          canRespond={mayDoAction(user, "alert.respond")}
          canEditRules={(await authorizeAction(db(), user, "alert.rules", { pipeline: name })).ok}
        />
      </Suspense>
    </>
  );
}
