import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { requireUser } from "@/server/auth/current-user";
import { DraftWorkspace } from "../../draft/draft-workspace";

type TProps = { params: Promise<{ name: string }> };

export async function generateMetadata({ params }: TProps): Promise<Metadata> {
  return { title: `New version of ${decodeURIComponent((await params).name)}` };
}

export default async function EditPipelinePage({ params }: TProps) {
  const name = decodeURIComponent((await params).name);
  await requireUser(`/pipelines/${encodeURIComponent(name)}/edit`);
  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link href="/pipelines">Pipelines</Link> <span aria-hidden>/</span>{" "}
        <Link href={`/pipelines/${encodeURIComponent(name)}`} className="mono">
          {name}
        </Link>{" "}
        <span aria-hidden>/</span> <span>New version</span>
      </nav>
      <PageHeader title={`New version of ${name}`}>
        Starts from the current version. A compatible change continues its checkpoint and state; otherwise
        registering says why not, and fresh state is an explicit choice.
      </PageHeader>
      <DraftWorkspace pipeline={name} />
    </>
  );
}
