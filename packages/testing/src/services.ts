// Where the services started by scripts/services.sh live. Tests read the same variables as the app.
export const testServices = {
  databaseUrl: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/sluice",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  kafkaBrokers: (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(","),
};

/** The same server as `url`, another database. */
export function databaseUrlFor(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
