import type { ReactNode } from "react";

/** What will appear here, and what to do next: an empty page is never just blank. */
export function EmptyState({
  title,
  children,
  next,
}: {
  title: string;
  children: ReactNode;
  next?: ReactNode;
}) {
  return (
    <section className="empty" aria-label={title}>
      <h2 className="empty__title">{title}</h2>
      <div className="empty__body">{children}</div>
      {next ? <div className="empty__next">{next}</div> : null}
    </section>
  );
}
