export { createPrismaClient, PrismaClient } from "./prisma";
export type { Prisma } from "./prisma";
export * from "@prisma/client";
