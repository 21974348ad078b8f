import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { PageHeader } from "@/components/page-header";
import { pipelineName } from "../links";
import { requireUser } from "@/server/auth/current-user";
import { RolloutView } from "./rollout-view";

type TProps = { params: Promise<{ name: string }> };

export async function generateMetadata({ params }: TProps): Promise<Metadata> {
  return { title: `${pipelineName((await params).name)} rollout` };
}

export default async function RolloutPage({ params }: TProps) {
  const name = pipelineName((await params).name);
  await requireUser(`/pipelines/${encodeURIComponent(name)}/rollout`);
  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link href="/pipelines">Pipelines</Link> <span aria-hidden>/</span>{" "}
        <Link href={`/pipelines/${encodeURIComponent(name)}`} className="mono">
          {name}
        </Link>{" "}
        <span aria-hidden>/</span> rollout
      </nav>
      <PageHeader title={`${name}: rollout`}>
        A new version (green) runs beside the serving one (blue) with its own state and table until it is
        reconciled against blue and promoted, or aborted. Both on the same charts, what their results differ
        in, and the next step. Live while the tab is open.
      </PageHeader>
      <Suspense fallback={<p className="muted">Loading the rollout…</p>}>
        <RolloutView name={name} />
      </Suspense>
    </>
  );
}
