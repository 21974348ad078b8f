import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { ssoConfig } from "@/server/auth/auth";
import { getCurrentUser } from "@/server/auth/current-user";
import { safeReturnPath } from "@/lib/safe-return-path";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string | string[] }>;
}) {
  const next = safeReturnPath((await searchParams).next);
  if (await getCurrentUser()) redirect(next);
  const sso = ssoConfig();
  return (
    <main className="sign-in">
      <div className="sign-in__card">
        <div className="brand brand--large">
          <span className="brand__mark" aria-hidden>
            ≋
          </span>{" "}
          Sluice
        </div>
        <p className="muted">Sign in to operate your pipelines.</p>
        <SignInForm next={next} sso={sso ? { label: sso.label } : null} />
      </div>
    </main>
  );
}
