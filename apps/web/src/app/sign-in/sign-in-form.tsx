"use client";
// Password sign-in and, when configured, single sign-on — both through the auth library's client.
import { useState, type FormEvent } from "react";
import { authClient, SSO_PROVIDER_ID } from "@/lib/auth-client";

/** The library answers a wrong password and an unknown email alike (401); so does this form. */
function messageFor(error: { status: number; message?: string }): string {
  if (error.status === 401) return "Wrong email or password.";
  return error.message || `Sign-in failed (HTTP ${error.status}). Try again.`;
}

export function SignInForm({ next, sso }: { next: string; sso: { label: string } | null }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setPending(true);
    const { error: failed } = await authClient.signIn.email({ email, password });
    if (failed) {
      setError(messageFor(failed));
      setPending(false);
      return;
    }
    // A full navigation, so the console's server-rendered layout sees the new session cookie.
    window.location.assign(next);
  }

  async function singleSignOn() {
    setError(null);
    setPending(true);
    const { error: failed } = await authClient.signIn.social({
      provider: SSO_PROVIDER_ID,
      callbackURL: next,
      errorCallbackURL: "/sign-in/problem",
    });
    if (failed) {
      setError(messageFor(failed));
      setPending(false);
    }
  }

  return (
    <>
      <form className="form" onSubmit={submit} noValidate>
        <label className="form__field">
          <span>Email</span>
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            autoFocus
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label className="form__field">
          <span>Password</span>
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {error ? (
          <p className="form__error" role="alert">
            {error}
          </p>
        ) : null}
        <button className="button button--primary" type="submit" disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {sso ? (
        <div className="sign-in__sso">
          <p className="muted small">or</p>
          <button className="button button--ghost" type="button" onClick={singleSignOn} disabled={pending}>
            Sign in with {sso.label}
          </button>
        </div>
      ) : null}
    </>
  );
}
