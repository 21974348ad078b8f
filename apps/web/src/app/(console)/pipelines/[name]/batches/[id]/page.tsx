import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { BatchDetail } from "./batch-detail";

type TProps = { params: Promise<{ name: string; id: string }> };

const decoded = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export async function generateMetadata({ params }: TProps): Promise<Metadata> {
  const { name, id } = await params;
  return { title: `${decoded(name)} batch ${id}` };
}

export default async function BatchPage({ params }: TProps) {
  const { name: raw, id } = await params;
  const name = decoded(raw);
  await requireUser(`/pipelines/${encodeURIComponent(name)}/batches/${encodeURIComponent(id)}`);
  const batchId = /^\d{1,15}$/.test(id) ? Number(id) : null;
  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link href="/pipelines">Pipelines</Link> <span aria-hidden>/</span>{" "}
        <Link href={`/pipelines/${encodeURIComponent(name)}`} className="mono">
          {name}
        </Link>{" "}
        <span aria-hidden>/</span> <span>batch {id}</span>
      </nav>
      <PageHeader title={`Batch ${id}`}>
        One micro-batch of <span className="mono">{name}</span>: the offsets it planned and read per
        partition, where its rows went, how long each phase took, the watermark before and after, the state it
        left, and its dead letters — or, if it failed, why.
      </PageHeader>
      <Suspense fallback={<p className="muted">Loading the batch…</p>}>
        {batchId === null ? (
          <p className="form__error">
            &ldquo;{id}&rdquo; is not a batch id: batch ids are whole numbers from 0.
          </p>
        ) : (
          <BatchDetail pipeline={name} batchId={batchId} />
        )}
      </Suspense>
    </>
  );
}
