// Request bodies are read with a limit, before anything else looks at them: a client (signed in or
// not) could otherwise make the console hold a 50 MB body in memory just to answer 401. A declared
// Content-Length over the limit is refused without reading a byte; a body without one is read until
// it passes the limit, then refused and the rest never read (the 413 closes the connection).

export const BODY_LIMITS = {
  /** tRPC: the largest input is a draft spec (at most 100,000 characters) and its dry-run options. */
  trpc: 1024 * 1024,
  /** The auth endpoints: an email and a password. */
  auth: 64 * 1024,
} as const;

export type TLimitedBody = { ok: true; request: Request } | { ok: false; message: string };

/** Headers of the 413: the connection is closed after it, which also drops the unread rest of the body. */
export const TOO_LARGE_HEADERS = { connection: "close" } as const;

function tooLarge(limit: number): string {
  return `The request body is larger than ${formatBytes(limit)}, the most this endpoint accepts; nothing was read further.`;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${n / (1024 * 1024)} MiB` : `${n / 1024} KiB`;
}

/** The request with its body read into memory when within `limit` bytes, or why it was refused. */
export async function withBodyLimit(req: Request, limit: number): Promise<TLimitedBody> {
  if (!req.body) return { ok: true, request: req };
  const declared = Number(req.headers.get("content-length") ?? NaN);
  // Refused without reading on: the rest is left unread (the answer closes the connection), so the
  // client's sending stalls instead of the console buffering it.
  if (declared > limit) return { ok: false, message: tooLarge(limit) };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.releaseLock();
      return { ok: false, message: tooLarge(limit) };
    }
    chunks.push(value);
  }
  const body = Buffer.concat(chunks);
  return {
    ok: true,
    request: new Request(req.url, { method: req.method, headers: req.headers, body, signal: req.signal }),
  };
}
