// `sluice run`: one pipeline in the foreground. SIGINT/SIGTERM let the current batch finish (or fail
// before commit, which is safe) and then exit. Transient failures — Postgres restarting, Kafka down —
// are waited out with a line per retry (retry.ts), at start-up as between batches; exit 2 only when
// they outlast the retries.
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ConfigurationError,
  ExpectationFailedError,
  FencedError,
  formatProgressLine,
  isRetriable,
  openRequeuedDeliveries,
  partitionGroup,
  PipelineRunner,
  registerPipelineVersion,
  type RegisteredVersion,
} from "@sluice/engine";
import { formatSpecErrors, specTiming } from "@sluice/pipeline-spec";
import { loadEnv, pipelineEnv, ZServiceEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { auditRegistration, authorizeSpecCli, EXIT_NOT_ALLOWED, type TCliActor } from "../actor";
import { CliError } from "../cli-error";
import { connect, type Services } from "../connect";
import { loadSpecFile } from "../load-spec";
import { describeRegistration } from "../registration";
import { describeUnfinishedBatch } from "../unfinished-batch";
import { describeFailure, runRetries, waitBeforeRetry, withRetries } from "../retry";

export type RunMode = "once" | "until-caught-up" | "continuous";

export async function runCommand(
  file: string,
  mode: RunMode,
  opts: { freshState?: boolean; as?: string; group?: string | undefined } = {},
): Promise<number> {
  const loaded = await loadSpecFile(file);
  if (!loaded.ok) {
    console.error(formatSpecErrors(loaded.errors, file));
    return 1;
  }
  const { spec } = loaded;
  let group: ReturnType<typeof partitionGroup>;
  try {
    group = partitionGroup(spec, opts.group === undefined ? undefined : Number(opts.group));
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    console.error(err.message);
    return 1;
  }
  const everyMs = specTiming(spec).triggerEveryMs;
  // trigger: availableNow drains the backlog, then stops.
  const effectiveMode: RunMode = mode === "continuous" && everyMs === undefined ? "until-caught-up" : mode;

  const stopping = new AbortController();
  const stop = () => stopping.abort();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);

  const at = loadEnv(ZServiceEnv);
  let services: Services | undefined;
  let runner: PipelineRunner | undefined;
  try {
    // Start-up waits for Postgres like a batch does: readiness, registration, the lease.
    let reg: RegisteredVersion | undefined;
    let allowed: boolean | undefined;
    let who: TCliActor | null = null;
    const started = await withRetries(
      at,
      async () => {
        services ??= await connect();
        if (allowed === undefined) {
          const db = createPrismaClient(services.pool);
          who = await authorizeSpecCli(db, opts.as, spec, opts).finally(() => db.$disconnect());
          allowed = who !== null;
        }
        if (!allowed || !who) return null;
        if (!reg) {
          reg = await registerPipelineVersion(services.pool, spec, {
            continueFromPrevious: !opts.freshState,
            registeredBy: who.label,
            reason: `sluice run ${file}`,
          });
          const db = createPrismaClient(services.pool);
          await auditRegistration(db, who, spec.name, reg, `sluice run ${file}`).finally(() =>
            db.$disconnect(),
          );
        }
        const opened = await PipelineRunner.open(
          { pool: services.pool, kafka: services.kafka, logger: services.logger },
          {
            pipelineVersionId: reg.pipelineVersionId,
            spec,
            owner: `${hostname()}:${process.pid}`,
            env: pipelineEnv(),
            ...(group ? { group: group.no } : {}),
          },
        );
        return { runner: opened, pool: services.pool, reg };
      },
      stopping.signal,
    );
    if (!started) return EXIT_NOT_ALLOWED;
    runner = started.runner;
    console.log(describeRegistration(spec.name, started.reg).join("\n"));
    const unfinished = await describeUnfinishedBatch(started.pool, started.reg.pipelineVersionId, group);
    // A warning, on stderr: stdout's lines starting "batch N" announce commits.
    if (unfinished) console.error(`${spec.name}: ${unfinished}`);
    // Webhook deliveries an operator re-queued (sluice webhooks retry) go out between batches, as on the workers.
    const requeued = await openRequeuedDeliveries(
      {
        pool: started.pool,
        pipelineVersionId: started.reg.pipelineVersionId,
        env: pipelineEnv(),
        ...(group ? { group } : {}),
      },
      spec,
    );

    let failures = 0;
    while (!stopping.signal.aborted) {
      const startedAt = Date.now();
      try {
        const result = await runner.runBatch();
        failures = 0;
        if (result.kind === "committed") console.log(formatProgressLine(result.progress));
        else if (effectiveMode !== "continuous") console.log("caught up: no new offsets");
        const resent = await requeued?.send(runner.leaseEpoch);
        if (resent && resent.found > 0) {
          console.log(
            `re-queued webhook deliveries: ${resent.found} found, ${resent.sent} sent, ${resent.alreadyDelivered} already delivered, ${resent.failed} failed again`,
          );
        }
        if (effectiveMode === "once") break;
        if (result.kind === "empty" && effectiveMode === "until-caught-up") break;
        if (result.kind === "committed" && result.progress.backlog > 0) continue;
      } catch (err) {
        if (!isRetriable(err) || effectiveMode === "once" || ++failures > runRetries()) throw err;
        await waitBeforeRetry(err, at, failures, stopping.signal);
        continue;
      }
      await sleep(Math.max(0, (everyMs ?? 0) - (Date.now() - startedAt)), undefined, {
        signal: stopping.signal,
      }).catch(() => undefined);
    }
    return 0;
  } catch (err) {
    if (err instanceof CliError) throw err;
    console.error(`${spec.name}: ${describeFailure(err, at)}`);
    if (err instanceof ExpectationFailedError) return 4;
    if (err instanceof FencedError) return 3;
    return isRetriable(err) ? 2 : 1;
  } finally {
    await runner?.close();
    await services?.close();
  }
}
