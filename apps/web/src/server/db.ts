// One Prisma client per server process (kept on globalThis so dev-mode reloads do not leak pools).
import "server-only";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { webEnv } from "./env";

const holder = globalThis as typeof globalThis & { __sluiceDb?: PrismaClient };

export function db(): PrismaClient {
  holder.__sluiceDb ??= createPrismaClient(webEnv().DATABASE_URL);
  return holder.__sluiceDb;
}
