import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { DraftWorkspace } from "../draft/draft-workspace";

export const metadata: Metadata = { title: "New pipeline" };

type TProps = { searchParams: Promise<{ topic?: string }> };

export default async function NewPipelinePage({ searchParams }: TProps) {
  await requireUser("/pipelines/new");
  const { topic } = await searchParams;
  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link href="/pipelines">Pipelines</Link> <span aria-hidden>/</span> <span>New pipeline</span>
      </nav>
      <PageHeader title="New pipeline">
        Write the spec (from the template, a file or the form), see every error at its line as you type,
        dry-run it on a sample of its real topic, then register and start it. Owners register pipelines of
        their own teams; admins any team&apos;s.
      </PageHeader>
      <DraftWorkspace {...(topic ? { topic } : {})} />
    </>
  );
}
