// `sluice start|pause|resume|stop|restart <pipeline|spec> [reason]`: lifecycle commands on the
// pipeline's latest version, run by the worker processes (see README "What runs where"). Given a
// spec file, `start` registers it first (a changed spec becomes a new version that continues the
// previous version's checkpoint and state, which is stopped — or, when the change makes that state
// wrong, is refused with the reasons; --fresh-state registers it with fresh state instead).
import { Redis } from "ioredis";
import { loadEnv, ZWorkerEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { isRetriable, registerPipelineVersion } from "@sluice/engine";
import {
  getPipelineRun,
  RunCommandError,
  runPipelineCommand,
  stopPipelineRun,
  type TBatchScheduler,
  type TRunCommand,
} from "@sluice/services";
import { formatSpecErrors } from "@sluice/pipeline-spec";
import { BatchQueue } from "@sluice/queue";
import {
  auditRegistration,
  authorizeCli,
  authorizeSpecCli,
  cliAuditWho,
  EXIT_NOT_ALLOWED,
  type TCliActor,
} from "../actor";
import { connect } from "../connect";
import { loadSpecFile } from "../load-spec";
import { describeRegistration } from "../registration";

const isSpecFile = (t: string) => /\.(ya?ml|json)$/.test(t);

export async function lifecycleCommand(
  command: TRunCommand,
  target: string,
  reason: string,
  opts: { freshState?: boolean; as?: string } = {},
): Promise<number> {
  const services = await connect();
  const db = createPrismaClient(services.pool);
  const scheduler = wakeWorkers();
  try {
    let pipelineVersionId: string;
    let label: string;
    let actor: string;
    let who: TCliActor | null;
    let pipelineId: string;
    if (isSpecFile(target)) {
      const loaded = await loadSpecFile(target);
      if (!loaded.ok) {
        console.error(formatSpecErrors(loaded.errors, target));
        return 1;
      }
      who = await authorizeSpecCli(db, opts.as, loaded.spec, opts);
      if (!who) return EXIT_NOT_ALLOWED;
      actor = who.label;
      const reg = await registerPipelineVersion(services.pool, loaded.spec, {
        continueFromPrevious: !opts.freshState,
        registeredBy: who.label,
        reason,
      });
      pipelineId = reg.pipelineId;
      await auditRegistration(db, who, loaded.spec.name, reg, reason);
      pipelineVersionId = reg.pipelineVersionId;
      label = `${loaded.spec.name} version ${reg.version}`;
      if (reg.created) console.log(describeRegistration(loaded.spec.name, reg).join("\n"));
      if (reg.replaced && command === "start") {
        await stopPipelineRun(db, {
          pipelineVersionId: reg.replaced.pipelineVersionId,
          actor,
          reason: `superseded by version ${reg.version}`,
        }).catch(() => undefined);
        console.log(
          `${loaded.spec.name}: version ${reg.version} replaces version ${reg.replaced.version}, which is stopped`,
        );
      }
    } else {
      who = await authorizeCli(db, opts.as, "pipeline.lifecycle", { pipeline: target });
      if (!who) return EXIT_NOT_ALLOWED;
      actor = who.label;
      const v = await db.pipelineVersion.findFirst({
        where: { pipeline: { name: target } },
        orderBy: { version: "desc" },
        select: { id: true, version: true, pipelineId: true },
      });
      if (!v) {
        console.error(
          `no pipeline named "${target}" — start one from its spec: npx sluice start <spec.yaml>`,
        );
        return 1;
      }
      pipelineVersionId = v.id;
      pipelineId = v.pipelineId;
      label = `${target} version ${v.version}`;
    }
    const name = isSpecFile(target) ? label.replace(/ version \d+$/, "") : target;
    const audit = { ...cliAuditWho(who), target: { type: "pipeline", id: pipelineId, label: name } };
    const result = await runPipelineCommand(
      db,
      { pipelineVersionId, command, actor, reason },
      { scheduler: scheduler.scheduler, audit },
    );
    console.log(`${label}: ${result.changed ? `${command} → ${result.phase}` : `already ${result.phase}`}`);
    const run = await getPipelineRun(db, pipelineVersionId, { transitions: 1 });
    if (run?.phase === "pausing" || run?.phase === "stopping")
      console.log(`  a batch is in flight; it commits first, then the version is ${run.desiredState}`);
    return 0;
  } catch (err) {
    if (err instanceof RunCommandError) {
      console.error(`${target}: ${err.message}`);
      return 1;
    }
    console.error(`${target}: ${(err as Error).message}`);
    return isRetriable(err) ? 2 : 1;
  } finally {
    await scheduler.close();
    await db.$disconnect();
    await services.close();
  }
}

/**
 * Queues the first batch at once. If Redis cannot be reached the command still succeeds: the run
 * state is in Postgres, and the workers' reconciler queues the batch within seconds.
 */
function wakeWorkers(): { scheduler: TBatchScheduler; close(): Promise<void> } {
  const env = loadEnv(ZWorkerEnv);
  const connection = new Redis(env.REDIS_URL, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
  });
  connection.on("error", () => undefined);
  const queue = new BatchQueue(env.WORKER_QUEUE, connection);
  return {
    scheduler: {
      scheduleTurn: (turn) =>
        queue
          .scheduleTurn(turn)
          .catch((err: Error) =>
            console.error(
              `  (could not reach Redis: ${err.message}; the workers will queue it within seconds)`,
            ),
          ),
    },
    async close() {
      await queue.close().catch(() => undefined);
      connection.disconnect();
    },
  };
}
