// The console's "page not found", inside its frame: what happened and the ways back.
import Link from "next/link";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";

export default function NotFound() {
  return (
    <div className="stack" data-testid="not-found">
      <PageHeader title="Page not found">There is no page at this address.</PageHeader>
      <EmptyState
        title="Nothing here"
        next={
          <>
            Go to the <Link href="/pipelines">fleet</Link>, the <Link href="/alerts">alerts</Link> or the{" "}
            <Link href="/change-requests">change requests</Link>.
          </>
        }
      >
        The link may be old, or the pipeline, batch or page may have been renamed or removed.
      </EmptyState>
    </div>
  );
}
