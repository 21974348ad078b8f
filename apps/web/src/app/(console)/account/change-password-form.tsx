"use client";
// Changing your own password through the auth library; every other session of yours is signed out.
import { useState, type FormEvent } from "react";
import { authClient } from "@/lib/auth-client";

export function ChangePasswordForm() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (next !== repeat) return setResult({ ok: false, text: "The new password and its repetition differ." });
    if (next.length < 10)
      return setResult({ ok: false, text: "Choose a new password of at least 10 characters." });
    setPending(true);
    const { error } = await authClient.changePassword({
      currentPassword: current,
      newPassword: next,
      revokeOtherSessions: true,
    });
    setPending(false);
    if (error)
      return setResult({
        ok: false,
        text: error.message || `Could not change the password (HTTP ${error.status}).`,
      });
    setCurrent("");
    setNext("");
    setRepeat("");
    setResult({
      ok: true,
      text: "Password changed. Every other browser signed in as you has been signed out.",
    });
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <label className="form__field">
        <span>Current password</span>
        <input
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          required
        />
      </label>
      <label className="form__field">
        <span>New password (at least 10 characters)</span>
        <input
          type="password"
          autoComplete="new-password"
          value={next}
          onChange={(e) => setNext(e.target.value)}
          required
        />
      </label>
      <label className="form__field">
        <span>New password again</span>
        <input
          type="password"
          autoComplete="new-password"
          value={repeat}
          onChange={(e) => setRepeat(e.target.value)}
          required
        />
      </label>
      {result ? (
        <p className={result.ok ? "notice" : "form__error"} role={result.ok ? "status" : "alert"}>
          {result.text}
        </p>
      ) : null}
      <button className="button button--primary" type="submit" disabled={pending}>
        {pending ? "Changing…" : "Change password"}
      </button>
    </form>
  );
}
