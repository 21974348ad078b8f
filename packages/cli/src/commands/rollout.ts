// `sluice rollout start <spec> [--from earliest|blue|<ISO time>] reason`: the spec's new version runs
// beside the serving one as a candidate (green), in tables of its own, from where --from says.
// `sluice rollout promote <pipeline> reason`: asks for the promotion (a change request someone else
// approves in the console; the CLI never approves one). `sluice rollout rollback|abort <pipeline>
// reason`: switch readers back to blue (after a promotion), or discard a running candidate.
// `sluice rollout reconcile <pipeline>`: reconcile the running rollout now (the workers do every
// minute) and print each output's result. docs/rollouts.md.
import { createPrismaClient } from "@sluice/db";
import { formatSpecErrors } from "@sluice/pipeline-spec";
import {
  abortRollout,
  ServiceError,
  kafkaTopicOffsets,
  reconcileRollout,
  requestPromotion,
  rollbackRollout,
  startRollout,
  type TRolloutStart,
  type TStoredReconciliation,
} from "@sluice/services";
import { authorizeCli, cliAuditWho, EXIT_NOT_ALLOWED } from "../actor";
import { connect } from "../connect";
import { loadSpecFile } from "../load-spec";

/** "earliest" (default), "blue", or an ISO time. */
export function parseRolloutStart(from: string | undefined): TRolloutStart | { error: string } {
  if (from === undefined || from === "earliest") return { kind: "earliest" };
  if (from === "blue") return { kind: "blue" };
  const at = new Date(from);
  if (/^\d{4}-\d{2}-\d{2}/.test(from) && !Number.isNaN(at.getTime())) return { kind: "timestamp", at };
  return { error: `--from ${from}: write --from earliest, --from blue or --from 2026-12-01T10:00:00Z` };
}

/** `--keep-previous 72h` or `7d` in hours; undefined: the service's default (a week). */
export function parseKeepPrevious(text: string | undefined): number | undefined | { error: string } {
  if (text === undefined) return undefined;
  const m = /^(\d+)\s*(h|d)$/.exec(text.trim());
  if (!m) return { error: `--keep-previous ${text}: write hours or days, e.g. --keep-previous 72h or 7d` };
  return Number(m[1]) * (m[2] === "d" ? 24 : 1);
}

export async function rolloutCommand(
  step: string,
  target: string | undefined,
  opts: {
    from?: string | undefined;
    keepPrevious?: string | undefined;
    reason: string;
    as?: string | undefined;
  },
): Promise<number> {
  if (!["start", "promote", "rollback", "abort", "reconcile"].includes(step) || !target) {
    console.error(
      "usage: sluice rollout start <spec> [--from earliest|blue|<ISO time>] [--keep-previous 7d] reason | promote|rollback|abort <pipeline> reason | reconcile <pipeline>",
    );
    return 1;
  }
  // Reconciling changes nothing a reader sees: no reason asked for.
  if (step !== "reconcile" && !opts.reason.trim()) {
    console.error(
      `why? give a reason after ${step === "start" ? "the spec" : "the pipeline"}: it is kept with the rollout and audited`,
    );
    return 1;
  }
  const from = parseRolloutStart(opts.from);
  if ("error" in from) {
    console.error(from.error);
    return 1;
  }
  const keepPreviousHours = parseKeepPrevious(opts.keepPrevious);
  if (typeof keepPreviousHours === "object") {
    console.error(keepPreviousHours.error);
    return 1;
  }
  const loaded = step === "start" ? await loadSpecFile(target) : undefined;
  if (loaded && !loaded.ok) {
    console.error(formatSpecErrors(loaded.errors, target));
    return 1;
  }
  const pipeline = loaded?.ok ? loaded.spec.name : target;
  const services = await connect();
  const db = createPrismaClient(services.pool);
  try {
    const action =
      step === "start" ? "pipeline.register" : step === "promote" ? "change.request" : "pipeline.lifecycle";
    const who = await authorizeCli(db, opts.as, action, { pipeline });
    if (!who) return EXIT_NOT_ALLOWED;
    const audit = cliAuditWho(who);
    if (step === "reconcile") {
      const r = await reconcileRollout(services.pool, db, pipeline, {
        actorUserId: audit.actorUserId,
        actor: audit.actor,
      });
      for (const rec of r.reconciliations) console.log(reconciliationLine(pipeline, rec));
      for (const s of r.skipped)
        console.log(`${pipeline}: output ${s.output || "(the sink)"} not compared: ${s.reason}`);
    } else if (loaded?.ok) {
      const r = await startRollout(db, kafkaTopicOffsets(services.kafka), audit, loaded.spec, {
        from,
        reason: opts.reason,
        ...(keepPreviousHours === undefined ? {} : { keepPreviousHours }),
      });
      console.log(
        `${pipeline}: rollout #${r.rolloutId} started: version ${r.green.version} (green) runs beside version ${r.blue.version} (blue, serving) from ${Object.entries(
          r.offsets,
        )
          .map(([p, o]) => `${p}:${o}`)
          .join(",")}`,
      );
      for (const w of r.warnings) console.log(`  warning: ${w}`);
      console.log(
        `  after a promotion, version ${r.blue.version} keeps its state and tables for ${r.keepPreviousHours} hours (a rollback needs them)`,
      );
    } else if (step === "promote") {
      const cr = await requestPromotion(db, audit, { pipeline, reason: opts.reason });
      console.log(
        `${pipeline}: change request #${cr.id} (promotion) is waiting for someone else's approval in the console (Change requests)`,
      );
    } else if (step === "rollback") {
      const r = await rollbackRollout(db, audit, { pipeline, reason: opts.reason });
      console.log(
        `${pipeline}: rollout #${r.id} rolled back: version ${r.blue.version} serves again, version ${r.green.version} stopped (its state and tables kept until ${r.keptUntil?.toISOString() ?? "?"})`,
      );
    } else {
      const r = await abortRollout(db, audit, { pipeline, reason: opts.reason });
      console.log(
        `${pipeline}: rollout #${r.id} aborted: version ${r.green.version} stopped for good, its state and table${r.dropped.length === 1 ? "" : "s"} dropped (${r.dropped.join(", ") || "none"})`,
      );
    }
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

/** One output's stored reconciliation in a line, with what explains its differences below it. */
function reconciliationLine(pipeline: string, rec: TStoredReconciliation): string {
  const output = rec.output ? ` output ${rec.output}` : "";
  const counts = rec.report?.counts;
  const head =
    rec.status === "compared" && counts
      ? `${counts.matching} keys match, ${counts.onlyBlue} only in blue, ${counts.onlyGreen} only in green, ${counts.differing} differ`
      : rec.status === "failed"
        ? `failed: ${rec.error ?? "no reason stored"}`
        : (rec.report?.notComparable.map((n) => `${n.what}: ${n.reason}`).join("; ") ?? "");
  const explained = (rec.report?.outcomes?.explanations ?? []).map((e) => `\n  ${e}`).join("");
  return `${pipeline}${output}: reconciliation #${rec.id} ${rec.status}${head ? `: ${head}` : ""}${explained}`;
}
