// Where a single sign-on that did not end in a session lands: the auth library redirects here with
// its error code. "no_access" (groups mapped to nothing) is the common one and says what to do.
import type { Metadata } from "next";
import Link from "next/link";

export const metadata: Metadata = { title: "Sign-in problem" };

const EXPLAINED: Record<string, { title: string; body: string }> = {
  no_access: {
    title: "No access to Sluice",
    body: "You signed in with your identity provider, but none of your groups is mapped to a Sluice role or team, so there is nothing you may see here yet. Ask a Sluice admin to map one of your groups (Admin → Single sign-on), then sign in again.",
  },
  ACCOUNT_DISABLED: {
    title: "Account disabled",
    body: "This Sluice account is disabled. Ask a Sluice admin to enable it.",
  },
  state_mismatch: {
    title: "Sign-in could not be completed",
    body: "The answer from the identity provider did not match a sign-in started here (its state was missing, expired or forged), so it was refused. Start again from the sign-in page.",
  },
  state_not_found: {
    title: "Sign-in could not be completed",
    body: "The answer from the identity provider carried no sign-in state, so it was refused. Start again from the sign-in page.",
  },
};

export default async function SignInProblemPage({
  searchParams,
}: {
  searchParams: Promise<{ error?: string; error_description?: string }>;
}) {
  const { error = "unknown", error_description: description } = await searchParams;
  const known = EXPLAINED[error] ?? (error.startsWith("state") ? EXPLAINED.state_mismatch : undefined);
  return (
    <main className="sign-in">
      <div className="sign-in__card" data-testid="sign-in-problem">
        <div className="brand brand--large">
          <span className="brand__mark" aria-hidden>
            ≋
          </span>{" "}
          Sluice
        </div>
        <h1>{known?.title ?? "Sign-in did not work"}</h1>
        <p>
          {known?.body ??
            "The identity provider's answer was refused. Start again from the sign-in page; if it happens again, an admin finds the reason in the console's log."}
        </p>
        {description && error === "no_access" ? <p className="muted small">{description}</p> : null}
        <p className="muted small">
          Reason code: <code>{error}</code>
        </p>
        <Link className="button button--primary" href="/sign-in">
          Back to sign-in
        </Link>
      </div>
    </main>
  );
}
