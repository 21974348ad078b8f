// The CLI proper, loaded by cli.ts once its signal handlers are in place. See USAGE in
// cli-options.ts and docs/producer.md. Exit codes: 0 done (also after a stop signal), 1 runtime
// failure, 2 bad options.
import { writeFile } from "node:fs/promises";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { realClock, simulatedClock } from "./clock";
import { parseCliArgs, UsageError, USAGE, type CliConfig } from "./cli-options";
import { manifestToJSON } from "./manifest";
import { formatProgress, PaymentProducer, type ProduceResult } from "./payment-producer";

const ZProducerEnv = ZServiceEnv.pick({ KAFKA_BROKERS: true }).partial();

function envBrokers(): string[] | undefined {
  try {
    return loadEnv(ZProducerEnv).KAFKA_BROKERS;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Run the CLI; `stop` aborts a run (after flushing). Resolves to the exit code. */
export async function main(argv: string[], stop: AbortSignal): Promise<number> {
  let config: CliConfig;
  try {
    const parsed = parseCliArgs(argv, envBrokers());
    if (parsed.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    config = parsed.config;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`sluice-producer: ${e.message}\nRun with --help for usage.\n`);
    return 2;
  }

  if (stop.aborted) {
    console.log("stopped before starting");
    return 0;
  }

  const clock = config.simulatedClock ? simulatedClock(config.simulatedClock) : realClock();
  const producer = new PaymentProducer({
    ...config.stream,
    clock,
    topic: config.topic,
    brokers: config.brokers,
    batchSize: config.batchSize,
    // A long demo run should not grow memory; the full manifest only when asked to write it.
    manifest: config.manifestPath ? "full" : "counts",
    kafkaLog: (line) => console.error(line),
  });
  let result: ProduceResult;
  try {
    console.log(`connecting to ${config.brokers.join(",")}...`);
    const topic = await producer.ensureTopic(config.partitions, stop);
    const pace = config.rate === undefined ? "as fast as possible" : `${config.rate}/s`;
    const amount = config.count === undefined ? "until Ctrl-C" : `${config.count} messages`;
    console.log(
      `producing to ${config.topic} (${topic.partitions} partitions${topic.created ? ", created" : ""}): ` +
        `${amount}, ${pace}, seed ${String(config.stream.seed)}`,
    );
    if (!topic.created && topic.partitions !== config.partitions) {
      console.log(`note: topic already existed with ${topic.partitions} partitions; --partitions ignored`);
    }
    const progress = { progressIntervalMs: config.progressIntervalMs };
    result =
      config.rate === undefined
        ? await producer.produce({ count: config.count ?? 0, signal: stop, ...progress })
        : await producer.run({
            ratePerSecond: config.rate,
            count: config.count,
            signal: stop,
            ...progress,
          });
  } catch (e) {
    await producer.disconnect().catch(() => undefined);
    if (stop.aborted) {
      console.log(`stopped before Kafka answered: ${(e as Error).message}`);
      return 0;
    }
    console.error(`sluice-producer: ${(e as Error).message}`);
    return 1;
  }
  await producer.disconnect();

  const c = result.manifest.counts;
  console.log(
    `done${result.aborted ? " (stopped)" : ""}: ` +
      formatProgress({
        sent: c.messages,
        events: c.events,
        duplicates: c.duplicates,
        late: c.late,
        outOfOrder: c.outOfOrder,
        malformed: c.malformed,
        elapsedMs: result.elapsedMs,
        ratePerSecond: result.ratePerSecond,
      }) +
      ` in ${(result.elapsedMs / 1000).toFixed(1)}s`,
  );
  if (config.manifestPath) {
    await writeFile(config.manifestPath, JSON.stringify(manifestToJSON(result.manifest)) + "\n");
    console.log(`manifest written to ${config.manifestPath}`);
  }
  return 0;
}
