// `sluice run`: one pipeline in the foreground. SIGINT/SIGTERM let the current batch finish (or fail
// before commit, which is safe) and then exit.
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { ExpectationFailedError, FencedError, formatProgressLine, isRetriable, openRequeuedDeliveries, PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import { formatSpecErrors, specTiming } from "@sluice/spec";
import { pipelineEnv } from "@sluice/config";
import { connect, stderrLogger } from "../connect";
import { loadSpecFile } from "../load-spec";
import { describeRegistration } from "../registration";

export type RunMode = "once" | "until-caught-up" | "continuous";

const MAX_RETRIES = 5;

export async function runCommand(file: string, mode: RunMode, opts: { freshState?: boolean } = {}): Promise<number> {
  const loaded = await loadSpecFile(file);
  if (!loaded.ok) {
    console.error(formatSpecErrors(loaded.errors, file));
    return 1;
  }
  const { spec } = loaded;
  const everyMs = specTiming(spec).triggerEveryMs;
  // trigger: availableNow drains the backlog, then stops.
  const effectiveMode: RunMode = mode === "continuous" && everyMs === undefined ? "until-caught-up" : mode;

  const services = connect();
  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);

  let runner: PipelineRunner | undefined;
  try {
    const reg = await registerPipelineVersion(services.pool, spec, { continueFromPrevious: !opts.freshState });
    console.log(describeRegistration(spec.name, reg).join("\n"));
    runner = await PipelineRunner.open(
      { pool: services.pool, kafka: services.kafka, logger: stderrLogger },
      { pipelineVersionId: reg.pipelineVersionId, spec, owner: `${hostname()}:${process.pid}`, env: pipelineEnv() },
    );
    // Webhook deliveries an operator re-queued (sluice webhooks retry) go out between batches, as on the workers.
    const requeued = await openRequeuedDeliveries({ pool: services.pool, pipelineVersionId: reg.pipelineVersionId, env: pipelineEnv() }, spec);

    let failures = 0;
    while (!stopping) {
      const started = Date.now();
      try {
        const result = await runner.runBatch();
        failures = 0;
        if (result.kind === "committed") console.log(formatProgressLine(result.progress));
        else if (effectiveMode !== "continuous") console.log("caught up: no new offsets");
        const resent = await requeued?.send(runner.leaseEpoch);
        if (resent && resent.found > 0) {
          console.log(`re-queued webhook deliveries: ${resent.found} found, ${resent.sent} sent, ${resent.alreadyDelivered} already delivered, ${resent.failed} failed again`);
        }
        if (effectiveMode === "once") break;
        if (result.kind === "empty" && effectiveMode === "until-caught-up") break;
        if (result.kind === "committed" && result.progress.backlog > 0) continue;
      } catch (err) {
        if (!isRetriable(err) || effectiveMode === "once" || ++failures > MAX_RETRIES) throw err;
        const backoff = Math.min(30_000, 500 * 2 ** failures);
        console.error(`batch failed (${(err as Error).message}); retry ${failures}/${MAX_RETRIES} in ${backoff} ms`);
        await sleep(backoff);
        continue;
      }
      await sleep(Math.max(0, (everyMs ?? 0) - (Date.now() - started)));
    }
    return 0;
  } catch (err) {
    console.error(`${spec.name}: ${(err as Error).message}`);
    if (err instanceof ExpectationFailedError) return 4;
    if (err instanceof FencedError) return 3;
    return isRetriable(err) ? 2 : 1;
  } finally {
    await runner?.close();
    await services.close();
  }
}
