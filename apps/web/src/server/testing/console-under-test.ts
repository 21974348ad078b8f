// The console's HTTP surface for integration tests: the real auth library instance and the real tRPC
// handler on a fresh migrated database, called with real Requests (cookies, Origin, addresses) —
// everything `next start` runs except the socket. Demo users are seeded with DEMO_PASSWORD.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { seedDemo } from "@sluice/services";
import { createTestDatabase, endPool, testServices, type TestDatabase } from "@sluice/testing";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import pino from "pino";
import superjson from "superjson";
import { handleAuthRequest } from "../auth/auth-route";
import { createAuth, type TAuth } from "../auth/create-auth";
import type { TSsoConfig } from "../auth/sso-config";
import {
  kafkaTopicOffsets,
  runHealthChecks,
  type TBatchScheduler,
  type TTopicOffsets,
} from "@sluice/services";
import { kafkaProbe, postgresProbe, redisProbe } from "../health/service-probes";
import { createTrpcHandler } from "../http/trpc-handler";

export const CONSOLE_URL = "http://127.0.0.1:3139";
export const DEMO_PASSWORD = "correct-horse-battery";

export interface TConsoleUnderTest {
  db: PrismaClient;
  database: TestDatabase;
  auth: TAuth;
  /** POST /api/auth/sign-in/email; `cookie` is the session cookie ("name=value") on success. */
  /** `device` sends a device cookie ("sluice.device=…") the way the browser that got it would. */
  signIn(
    email: string,
    password: string,
    opts?: { ip?: string; device?: string | null },
  ): Promise<{
    status: number;
    body: { message?: string; code?: string; retryAfterSeconds?: number };
    cookie: string | null;
    /** The device cookie a successful sign-in gives the browser ("sluice.device=…"). */
    device: string | null;
  }>;
  /** POST to any /api/auth path as a browser on the console's own page would. */
  authPost(
    path: string,
    body: unknown,
    cookie: string | null,
    opts?: { origin?: string; ip?: string },
  ): Promise<Response>;
  /** A tRPC call: queries as GET, mutations as POST from the console's origin (or `origin`). */
  trpc(
    kind: "query" | "mutation",
    path: string,
    input: unknown,
    cookie: string | null,
    opts?: { origin?: string | null },
  ): Promise<{ status: number; json: unknown; message?: string }>;
  /** Routes a request as `next start` does for /api/auth, /api/trpc and /api/health. */
  handle(req: Request): Promise<Response>;
  close(): Promise<void>;
}

export async function startConsoleUnderTest(
  label: string,
  opts: { sso?: TSsoConfig; scheduler?: TBatchScheduler; topicOffsets?: TTopicOffsets } = {},
): Promise<TConsoleUnderTest> {
  const database = await createTestDatabase(label);
  const db = createPrismaClient(database.url);
  await seedDemo(db, DEMO_PASSWORD);
  const logger = pino({ level: "silent" });
  const trustedOrigins = [CONSOLE_URL];
  const auth = createAuth({
    db,
    secret: "s".repeat(48),
    publicUrl: CONSOLE_URL,
    trustedOrigins,
    sessionTtlHours: 12,
    sso: opts.sso ?? null,
    logger,
  });
  // The engine's resources on the same database and the test Kafka broker, made on first use.
  let plane: { pool: pg.Pool; kafka: Kafka } | undefined;
  const dataPlane = () =>
    (plane ??= {
      pool: new pg.Pool({ connectionString: database.url, max: 4 }),
      kafka: new Kafka({
        brokers: testServices.kafkaBrokers,
        clientId: `it-${label}`,
        logLevel: logLevel.NOTHING,
      }),
    });
  const trpcHandler = createTrpcHandler({
    auth,
    db,
    logger,
    trustedOrigins,
    dataPlane,
    ...(opts.scheduler ? { scheduler: opts.scheduler } : {}),
    topicOffsets: opts.topicOffsets ?? testTopicOffsets(),
  });

  const authPost = (
    path: string,
    body: unknown,
    cookie: string | null,
    o: { origin?: string; ip?: string } = {},
  ) =>
    handleAuthRequest(
      auth,
      new Request(`${CONSOLE_URL}/api/auth${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          origin: o.origin ?? CONSOLE_URL,
          "x-forwarded-for": o.ip ?? "127.0.0.10",
          "user-agent": "integration-test",
          ...(cookie ? { cookie } : {}),
        },
        body: JSON.stringify(body),
      }),
    );

  const health = () =>
    runHealthChecks(
      {
        postgres: postgresProbe(db),
        redis: redisProbe(testServices.redisUrl),
        kafka: kafkaProbe(testServices.kafkaBrokers),
      },
      { timeoutMs: 2000 },
    ).then((r) => Response.json(r, { status: r.status === "ok" ? 200 : 503 }));

  return {
    db,
    database,
    auth,
    authPost,
    handle(req) {
      const { pathname } = new URL(req.url);
      if (pathname.startsWith("/api/auth/")) return handleAuthRequest(auth, req);
      if (pathname.startsWith("/api/trpc/")) return trpcHandler(req);
      if (pathname === "/api/health") return health();
      return Promise.resolve(new Response("not found", { status: 404 }));
    },
    async signIn(email, password, o = {}) {
      const res = await authPost("/sign-in/email", { email, password }, o.device ?? null, o);
      const set = (name: string) =>
        res.headers
          .getSetCookie()
          .find((c) => c.startsWith(`${name}=`))
          ?.split(";")[0] ?? null;
      return {
        status: res.status,
        body: await res.json().catch(() => ({})),
        cookie: set("sluice.session_token"),
        device: set("sluice.device"),
      };
    },
    async trpc(kind, path, input, cookie, o = {}) {
      const headers: Record<string, string> = {
        "x-forwarded-for": "127.0.0.10",
        ...(cookie ? { cookie } : {}),
      };
      const origin = o.origin === undefined ? CONSOLE_URL : o.origin;
      const serialized = encodeURIComponent(JSON.stringify(superjson.serialize(input)));
      const req =
        kind === "query"
          ? new Request(`${CONSOLE_URL}/api/trpc/${path}?input=${serialized}`, { headers })
          : new Request(`${CONSOLE_URL}/api/trpc/${path}`, {
              method: "POST",
              headers: { ...headers, "content-type": "application/json", ...(origin ? { origin } : {}) },
              body: JSON.stringify(superjson.serialize(input)),
            });
      const res = await trpcHandler(req);
      const json = (await res.json()) as { error?: { message?: string; json?: { message?: string } } };
      return { status: res.status, json, message: json.error?.json?.message ?? json.error?.message };
    },
    async close() {
      if (plane) await endPool(plane.pool);
      await db.$disconnect();
      await database.drop();
    },
  };
}

/** The shared test Kafka (KAFKA_BROKERS or 127.0.0.1:9092); an admin client connects only when a reset is requested. */
function testTopicOffsets(): TTopicOffsets {
  return kafkaTopicOffsets(
    new Kafka({
      clientId: "console-under-test",
      brokers: testServices.kafkaBrokers,
      logLevel: logLevel.NOTHING,
    }),
  );
}
