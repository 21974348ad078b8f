// `sluice reset <pipeline[@version]> --to earliest|latest|<ISO time>|<p:offset,…> [--clear-state] [reason]`:
// ask for a checkpoint reset of the version named (`orders@2`, `--version 2`), else the serving one. It only raises a change request (with its impact, or the refusal and
// its reason); someone else approves and applies it in the console (Change requests). The CLI never
// applies one: that is the point of the second person.
import { createPrismaClient } from "@sluice/db";
import {
  ServiceError,
  kafkaTopicOffsets,
  requestCheckpointReset,
  type TResetImpact,
  type TResetTarget,
} from "@sluice/services";
import { authorizeCli, cliAuditWho, EXIT_NOT_ALLOWED } from "../actor";
import { connect } from "../connect";
import { parsePipelineTarget, versionLabel } from "../pipeline-target";

/** "earliest", "latest", an ISO time, or "0:120,1:80"; a message saying what to write otherwise. */
export function parseResetTarget(to: string | undefined): TResetTarget | { error: string } {
  const hint =
    "write --to earliest, --to latest, --to 2026-12-01T10:00:00Z or --to 0:120,1:80 (partition:offset)";
  if (!to) return { error: `where to? ${hint}` };
  if (to === "earliest" || to === "latest") return { kind: to };
  if (/^\d+:\d+(,\d+:\d+)*$/.test(to))
    return {
      kind: "offsets",
      offsets: Object.fromEntries(
        to
          .split(",")
          .map((p) => p.split(":"))
          .map(([k, v]) => [k!, Number(v)]),
      ),
    };
  const at = new Date(to);
  if (/^\d{4}-\d{2}-\d{2}/.test(to) && !Number.isNaN(at.getTime())) return { kind: "timestamp", at };
  return { error: `--to ${to}: not a reset target; ${hint}` };
}

export async function resetCommand(
  named: string,
  opts: { to: string | undefined; clearState: boolean; reason: string; as?: string; version?: string },
): Promise<number> {
  const which = parsePipelineTarget(named, opts.version);
  if ("error" in which) {
    console.error(which.error);
    return 1;
  }
  const pipeline = which.name;
  const target = parseResetTarget(opts.to);
  if ("error" in target) {
    console.error(target.error);
    return 1;
  }
  if (!opts.reason.trim()) {
    console.error(
      'why? give a reason after the pipeline, e.g. npx sluice reset payments-ledger --to latest "skip the bad hour": the approver reads it',
    );
    return 1;
  }
  const services = await connect();
  const db = createPrismaClient(services.pool);
  try {
    const who = await authorizeCli(db, opts.as, "change.request", { pipeline });
    if (!who) return EXIT_NOT_ALLOWED;
    const cr = await requestCheckpointReset(db, kafkaTopicOffsets(services.kafka), cliAuditWho(who), {
      pipeline,
      ...(which.version === undefined ? {} : { version: which.version }),
      to: target,
      state: opts.clearState ? "clear" : "keep",
      reason: opts.reason,
    });
    const impact = cr.impact as TResetImpact;
    console.log(
      `${versionLabel(pipeline, cr.version)}: change request #${cr.id} (checkpoint reset) is waiting for someone else's approval in the console (Change requests)`,
    );
    for (const p of impact.partitions)
      console.log(
        `  partition ${p.partition}: ${p.current} → ${p.target} (log ${p.low}–${p.high}): ${p.reprocessed} re-read, ${p.skipped} skipped`,
      );
    console.log(`  result: ${impact.result}`);
    for (const w of impact.warnings) console.log(`  warning: ${w}`);
    return 0;
  } catch (err) {
    if (err instanceof ServiceError) {
      console.error(`${pipeline}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await db.$disconnect();
    await services.close();
  }
}
