// The console's security headers, in one place. A page on another origin must not be able to frame
// the console (clicks in a frame pass the origin check: clickjacking), a response must not be
// sniffed into another type, no URL (pipeline names, filters) leaks to other sites as a referrer, and
// over https browsers must keep to https. Pages also get a Content-Security-Policy with a fresh nonce
// per request (src/proxy.ts): Next.js puts the nonce on its own inline scripts when it renders, and
// 'strict-dynamic' lets those load the app's chunks — no other script runs.
// No framework imports: the proxy, the server (server.ts via front-door.ts) and tests share it.

/** Headers every response gets, API answers and static files included. */
export function baseSecurityHeaders(opts: { https: boolean }): Record<string, string> {
  return {
    "X-Content-Type-Options": "nosniff",
    // frame-ancestors in the pages' CSP says the same; this covers every other response and old browsers.
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    ...(opts.https ? { "Strict-Transport-Security": "max-age=31536000" } : {}),
  };
}

/**
 * The pages' policy. Styles allow inline: React's style attributes, the editor (CodeMirror) and the
 * charts inject styles at run time, which nonces cannot cover; scripts, the dangerous part, need the
 * nonce. Connections, images and fonts only from the console itself.
 */
export function contentSecurityPolicy(nonce: string, opts: { https: boolean; dev?: boolean }): string {
  return [
    "default-src 'self'",
    // `next dev` only: React's development build needs eval for its debugging aids.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${opts.dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(opts.https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

/** A fresh, unguessable nonce (128 bits, base64). */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
