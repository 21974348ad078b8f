// Where to go after signing in. Only same-site paths: `?next=https://evil.example` or `//evil` would
// otherwise turn the sign-in page into an open redirect.
export function safeReturnPath(next: string | string[] | undefined, fallback = "/pipelines"): string {
  const value = Array.isArray(next) ? next[0] : next;
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return fallback;
  if (value.startsWith("/sign-in")) return fallback;
  return value;
}
