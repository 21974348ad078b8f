// `sluice start|pause|resume|stop|restart <pipeline[@version]|spec> [reason] [--version N]`: lifecycle
// commands on one pipeline version — the one named (`orders@2`, `--version 2`), else the serving one
// (pipelines.serving_version_id) — run by the worker processes (see README "What runs where"). What it prints names the
// version, and says which other versions of the pipeline still run, so none runs unseen. Given a
// spec file, `start` registers it first (a changed spec becomes a new version that continues the
// previous version's checkpoint and state, which is stopped — or, when the change makes that state
// wrong, is refused with the reasons; --fresh-state registers it with fresh state instead).
import { Redis } from "ioredis";
import { loadEnv, ZWorkerEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { isRetriable, registerPipelineVersion } from "@sluice/engine";
import {
  getPipelineRun,
  ServiceError,
  runPhase,
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
import { parsePipelineTarget, versionLabel } from "../pipeline-target";
import { describeRegistration } from "../registration";

const isSpecFile = (t: string) => /\.(ya?ml|json)$/.test(t);

export async function lifecycleCommand(
  command: TRunCommand,
  target: string,
  reason: string,
  opts: { freshState?: boolean; as?: string; version?: string } = {},
): Promise<number> {
  const named = isSpecFile(target) ? null : parsePipelineTarget(target, opts.version);
  if (named && "error" in named) {
    console.error(named.error);
    return 1;
  }
  if (!named && opts.version !== undefined) {
    console.error(
      `--version names a registered version; a spec file registers its own (leave --version out, or name the pipeline: ${target.replace(/\.(ya?ml|json)$/, "")}@${opts.version})`,
    );
    return 1;
  }
  const services = await connect();
  const db = createPrismaClient(services.pool);
  const scheduler = wakeWorkers();
  try {
    let pipelineVersionId: string;
    let label: string;
    let actor: string;
    let who: TCliActor | null;
    let pipelineId: string;
    let name: string;
    if (!named) {
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
      name = loaded.spec.name;
      await auditRegistration(db, who, loaded.spec.name, reg, reason);
      pipelineVersionId = reg.pipelineVersionId;
      label = versionLabel(loaded.spec.name, reg.version);
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
      name = named.name;
      who = await authorizeCli(db, opts.as, "pipeline.lifecycle", { pipeline: name });
      if (!who) return EXIT_NOT_ALLOWED;
      actor = who.label;
      const v = await db.pipelineVersion.findFirst({
        where:
          named.version === undefined
            ? { servingFor: { is: { name } } }
            : { pipeline: { name }, version: named.version },
        select: { id: true, version: true, pipelineId: true },
      });
      if (!v) {
        const versions = await db.pipelineVersion.findMany({
          where: { pipeline: { name } },
          orderBy: { version: "asc" },
          select: { version: true },
        });
        console.error(
          versions.length === 0
            ? `no pipeline named "${name}" — start one from its spec: npx sluice start <spec.yaml>`
            : `${name} has no version ${named.version} (its versions: ${versions.map((x) => x.version).join(", ")})`,
        );
        return 1;
      }
      pipelineVersionId = v.id;
      pipelineId = v.pipelineId;
      label = versionLabel(name, v.version);
    }
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
    for (const other of await otherActiveVersions(db, name, pipelineVersionId))
      console.log(
        `  also not stopped: ${versionLabel(name, other.version)} (${other.phase}) — act on it with npx sluice <command> ${name}@${other.version}`,
      );
    return 0;
  } catch (err) {
    if (err instanceof ServiceError) {
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

/** The pipeline's other versions that are not stopped (running, pausing, paused or failed), oldest first. */
async function otherActiveVersions(
  db: ReturnType<typeof createPrismaClient>,
  name: string,
  except: string,
): Promise<{ version: number; phase: string }[]> {
  const rows = await db.pipelineVersion.findMany({
    where: {
      pipeline: { name },
      id: { not: except },
      run: { OR: [{ status: { not: "stopped" } }, { desiredState: { not: "stopped" } }] },
    },
    orderBy: { version: "asc" },
    select: { version: true, run: { select: { status: true, desiredState: true } } },
  });
  return rows.map((r) => ({ version: r.version, phase: runPhase(r.run!.status, r.run!.desiredState) }));
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
