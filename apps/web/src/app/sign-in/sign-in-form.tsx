"use client";
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";

export function SignInForm({ next }: { next: string }) {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      // A full navigation, so the console's server-rendered layout sees the new session cookie.
      onSuccess: () => window.location.assign(next),
    }),
  );

  function submit(event: FormEvent) {
    event.preventDefault();
    signIn.mutate({ email, password });
  }

  const fieldErrors = signIn.error?.data?.fieldErrors;
  const message = fieldErrors ? Object.values(fieldErrors).flat().join(" ") : signIn.error?.message;

  return (
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
      {message ? (
        <p className="form__error" role="alert">
          {message}
        </p>
      ) : null}
      <button
        className="button button--primary"
        type="submit"
        disabled={signIn.isPending || signIn.isSuccess}
      >
        {signIn.isPending || signIn.isSuccess ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
