// Command-line parsing for cli.ts, kept apart from the process plumbing so it can be unit tested:
// argv in, a validated config (or a usage error naming the bad option) out.
import { parseArgs } from "node:util";
import { z } from "zod";
import type { JsonValue, TypeChange } from "./adversarial";
import { DEFAULT_BROKERS, DEFAULT_PARTITIONS, isValidTopicName } from "./kafka-output";
import { OptionsError, resolveStreamOptions, type PaymentStreamOptions } from "./options";
import type { PaymentEventField } from "./payment-events";

export const USAGE = `Usage: sluice-producer [options]

Sends seeded payment events (authorization, settlement, refund, dispute) to Kafka, key = merchant_id.
Without --count it runs until Ctrl-C (SIGINT) or SIGTERM, then flushes and prints a summary.

Kafka
  --topic <name>               topic (default payments); created if missing
  --partitions <n>             partitions when creating the topic (default ${DEFAULT_PARTITIONS})
  --brokers <host:port,...>    default $KAFKA_BROKERS, else ${DEFAULT_BROKERS.join(",")}
  --batch-size <n>             messages per Kafka request (default 1000)

Volume and pace
  --rate <msgs/s>              messages per second (default 200)
  --count <n>                  send exactly n messages, then stop; as fast as possible unless --rate is given

Events
  --seed <n|text>              same seed + options = same stream (default 42)
  --merchants <n>              distinct merchants (default 300)
  --customers <n>              distinct customers (default 20 per merchant)
  --other-currency <share>     share of payments not in USD/EUR/GBP (default 0.03)
  --non-positive <share>       share of events with amount <= 0 (default 0)
  --sim-start <ISO time>       simulated clock from this time instead of real time
  --sim-step <duration>        simulated clock step per event (default 1000/rate ms)

Adversarial (shares in [0, 1], default 0)
  --duplicates <share>         events re-sent with the same event_id and bytes (producer retries)
  --late <share>               events whose event_time is --late-min..--late-max behind the clock
  --late-min <duration>        default 2m
  --late-max <duration>        default 3h
  --out-of-order <share>       events emitted after later events of the same merchant
  --out-of-order-window <n>    overtaken by 1..n later events of the merchant (default 5)
  --malformed <share>          not JSON, truncated JSON, missing field or wrong type

Schema drift
  --extra-field <name=value>   add a field to drifted events (value is JSON if it parses); repeatable
  --type-change <field=kind>   e.g. amount=non-numeric-string, amount=number, seq=string,
                               event_time=number, <field>=null; repeatable
  --drift-share <share>        share of events that drift (default 1)
  --drift-start <n>            drift starts at the n-th generated event (default 0)

Output
  --manifest <path>            write the full manifest (every event id, duplicates, late, malformed) as JSON
  --progress <duration>        progress line interval (default 5s; 0 = off)
  -h, --help                   show this help

Durations: 250ms, 30s, 15m, 3h (a bare number is milliseconds).
Example:
  npx tsx packages/producer/src/cli.ts --topic payments --rate 200 --merchants 300 --seed 42 \\
    --duplicates 0.05 --late 0.02 --out-of-order 0.05 --malformed 0.01
`;

export class UsageError extends Error {
  override name = "UsageError";
}

export interface CliConfig {
  topic: string;
  partitions: number;
  brokers: string[];
  batchSize: number;
  /** Messages per second; undefined with --count and no --rate means "as fast as possible". */
  rate: number | undefined;
  count: number | undefined;
  stream: PaymentStreamOptions;
  /** Simulated clock settings, or null for real time. */
  simulatedClock: { start: number; stepMs: number } | null;
  manifestPath: string | undefined;
  progressIntervalMs: number;
}

export type CliParse = { help: true } | { help: false; config: CliConfig };

const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string): number | null {
  const m = DURATION_RE.exec(text.trim());
  if (!m) return null;
  return Math.round(Number(m[1]) * (UNIT_MS[m[2] ?? "ms"] as number));
}

const num = (what: string) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+(\.\d+)?$/, `${what}: expected a number`)
    .transform(Number);
const intIn = (what: string, min: number, max: number) =>
  num(what).refine(
    (n) => Number.isInteger(n) && n >= min && n <= max,
    `${what}: expected an integer in [${min}, ${max}]`,
  );
const shareOf = (what: string) =>
  num(what).refine((n) => n >= 0 && n <= 1, `${what}: expected a share in [0, 1]`);
const duration = (what: string) =>
  z.string().transform((s, ctx) => {
    const ms = parseDuration(s);
    if (ms === null) {
      ctx.addIssue({ code: "custom", message: `${what}: expected a duration like 250ms, 30s, 15m, 3h` });
      return z.NEVER;
    }
    return ms;
  });
const pair = (what: string) =>
  z.string().transform((s, ctx) => {
    const i = s.indexOf("=");
    if (i <= 0) {
      ctx.addIssue({ code: "custom", message: `${what}: expected name=value, got ${JSON.stringify(s)}` });
      return z.NEVER;
    }
    return [s.slice(0, i), s.slice(i + 1)] as const;
  });

const ZArgs = z.object({
  topic: z
    .string()
    .default("payments")
    .refine(isValidTopicName, "--topic: letters, digits, '.', '_' and '-' only"),
  partitions: intIn("--partitions", 1, 10_000).optional(),
  brokers: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((b) => b.trim())
        .filter(Boolean),
    )
    .refine(
      (list) => list.length > 0 && list.every((b) => /^[^\s:]+:\d{1,5}$/.test(b)),
      "--brokers: expected host:port[,host:port...]",
    )
    .optional(),
  "batch-size": intIn("--batch-size", 1, 100_000).optional(),
  rate: num("--rate")
    .refine((n) => n > 0 && n <= 10_000_000, "--rate: expected a number > 0")
    .optional(),
  count: intIn("--count", 0, Number.MAX_SAFE_INTEGER).optional(),
  seed: z.string().min(1, "--seed: must not be empty").optional(),
  merchants: intIn("--merchants", 1, 1_000_000).optional(),
  customers: intIn("--customers", 1, 100_000_000).optional(),
  "other-currency": shareOf("--other-currency").optional(),
  "non-positive": shareOf("--non-positive").optional(),
  "sim-start": z
    .string()
    .transform((s, ctx) => {
      const ms = Date.parse(s);
      if (!Number.isFinite(ms)) {
        ctx.addIssue({
          code: "custom",
          message: `--sim-start: expected an ISO-8601 time, got ${JSON.stringify(s)}`,
        });
        return z.NEVER;
      }
      return ms;
    })
    .optional(),
  "sim-step": duration("--sim-step").optional(),
  duplicates: shareOf("--duplicates").optional(),
  late: shareOf("--late").optional(),
  "late-min": duration("--late-min").optional(),
  "late-max": duration("--late-max").optional(),
  "out-of-order": shareOf("--out-of-order").optional(),
  "out-of-order-window": intIn("--out-of-order-window", 1, 1000).optional(),
  malformed: shareOf("--malformed").optional(),
  "extra-field": z.array(pair("--extra-field")).optional(),
  "type-change": z.array(pair("--type-change")).optional(),
  "drift-share": shareOf("--drift-share").optional(),
  "drift-start": intIn("--drift-start", 0, Number.MAX_SAFE_INTEGER).optional(),
  manifest: z.string().min(1).optional(),
  progress: duration("--progress").optional(),
});

const ARG_SPEC = Object.fromEntries(
  Object.keys(ZArgs.shape).map((name) => [
    name,
    { type: "string" as const, multiple: name === "extra-field" || name === "type-change" },
  ]),
);

function jsonOrString(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** Parse argv (without node and script). `envBrokers` come from KAFKA_BROKERS, if set. Throws UsageError. */
export function parseCliArgs(argv: string[], envBrokers?: string[]): CliParse {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args: argv,
      options: { ...ARG_SPEC, help: { type: "boolean", short: "h" } },
      strict: true,
    }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return { help: true };
  const parsed = ZArgs.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join("\n"));
  const a = parsed.data;

  const seed = a.seed ?? 42; // "42" and 42 seed the same stream
  const typeChanges: Partial<Record<PaymentEventField, TypeChange>> = {};
  for (const [field, kind] of a["type-change"] ?? [])
    typeChanges[field as PaymentEventField] = kind as TypeChange;
  const stream: PaymentStreamOptions = {
    seed,
    merchants: a.merchants,
    customers: a.customers,
    otherCurrencyShare: a["other-currency"],
    nonPositiveAmountShare: a["non-positive"],
    duplicateShare: a.duplicates,
    lateShare: a.late,
    lateMinMs: a["late-min"],
    lateMaxMs: a["late-max"],
    outOfOrderShare: a["out-of-order"],
    outOfOrderWindow: a["out-of-order-window"],
    malformedShare: a.malformed,
    extraFields: Object.fromEntries((a["extra-field"] ?? []).map(([k, v]) => [k, jsonOrString(v)])),
    typeChanges,
    driftShare: a["drift-share"],
    driftStartAt: a["drift-start"],
  };
  // Let the library check what only it knows (type change kinds, late-min <= late-max, ...), so the
  // CLI rejects exactly what the library would, before connecting to Kafka.
  try {
    resolveStreamOptions(stream);
  } catch (e) {
    if (e instanceof OptionsError) throw new UsageError(e.message);
    throw e;
  }
  if (a["sim-step"] !== undefined && a["sim-start"] === undefined)
    throw new UsageError("--sim-step needs --sim-start");
  const rate = a.rate ?? (a.count === undefined ? 200 : undefined);

  return {
    help: false,
    config: {
      topic: a.topic,
      partitions: a.partitions ?? DEFAULT_PARTITIONS,
      brokers: a.brokers ?? (envBrokers && envBrokers.length > 0 ? envBrokers : DEFAULT_BROKERS),
      batchSize: a["batch-size"] ?? 1000,
      rate,
      count: a.count,
      stream,
      simulatedClock:
        a["sim-start"] === undefined
          ? null
          : { start: a["sim-start"], stepMs: a["sim-step"] ?? 1000 / (rate ?? 1000) },
      manifestPath: a.manifest,
      progressIntervalMs: a.progress ?? 5000,
    },
  };
}
