import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/session/current-user";
import { PipelineDetail } from "./pipeline-detail";

type TProps = { params: Promise<{ name: string }> };

/** Pipeline names are slugs; anything else in the URL is looked up as typed and simply not found. */
function pipelineName(param: string): string {
  try {
    return decodeURIComponent(param);
  } catch {
    return param;
  }
}

export async function generateMetadata({ params }: TProps): Promise<Metadata> {
  return { title: pipelineName((await params).name) };
}

export default async function PipelinePage({ params }: TProps) {
  const name = pipelineName((await params).name);
  await requireUser(`/pipelines/${encodeURIComponent(name)}`);
  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link href="/pipelines">Pipelines</Link> <span aria-hidden>/</span> <span className="mono">{name}</span>
      </nav>
      <PageHeader title={name}>
        What the engine reports for the pipeline&apos;s latest version: its run state on the workers, the newest
        progress record with each partition&apos;s event time, the recent batches, and the rows that did not reach
        the sink and why. Refreshed every few seconds.
      </PageHeader>
      <PipelineDetail name={name} />
    </>
  );
}
