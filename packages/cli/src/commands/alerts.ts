// `sluice alerts list [pipeline] [--all]`: firing and acknowledged alerts (and, with --all, those
// resolved in the last 24 hours), problems first — what the console's Alerts page shows.
// `sluice alerts ack|resolve <alert #> [note]`: acknowledge (reminders stop) or resolve by hand.
// `sluice alerts silence <pipeline> --for <duration> [--rule <kind>] <reason>`: notifications off until
// the silence expires (required); the alerts keep being evaluated. Changes act as --as/SLUICE_ACTOR,
// allowed like the console's (alert.respond) and audited.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { isRetriable } from "@sluice/engine";
import {
  formatRuleValue,
  acknowledgeAlert,
  ServiceError,
  findAlerts,
  resolveAlert,
  silenceAlerts,
  type TAlertView,
} from "@sluice/services";
import { parseDuration } from "@sluice/pipeline-spec";
import { authorizeCli, EXIT_NOT_ALLOWED } from "../actor";
import { connect } from "../connect";

export async function alertsListCommand(
  pipeline: string | undefined,
  opts: { all: boolean },
): Promise<number> {
  return withDb(async (db) => {
    const alerts = await findAlerts(db, {
      ...(pipeline ? { pipeline } : {}),
      resolvedWithinHours: opts.all ? 24 : 0,
    });
    const shown = opts.all ? alerts : alerts.filter((a) => a.state !== "resolved");
    if (shown.length === 0) {
      console.log(
        `no ${opts.all ? "" : "open "}alerts${pipeline ? ` on ${pipeline}` : ""}${opts.all ? " in the last 24 hours" : " (--all adds those resolved in the last 24 hours)"}`,
      );
      return 0;
    }
    for (const a of shown) console.log(formatAlert(a));
    if (shown.some((a) => a.state === "firing"))
      console.log(
        "acknowledge one: npx sluice alerts ack <#> [note]   silence a pipeline: npx sluice alerts silence <pipeline> --for 2h <reason>",
      );
    return 0;
  });
}

export async function alertsRespondCommand(
  verb: "ack" | "resolve",
  id: string | undefined,
  note: string,
  opts: { as?: string },
): Promise<number> {
  if (!id || !/^\d+$/.test(id)) {
    console.error(
      `which alert? npx sluice alerts ${verb} <alert #> [note] (the # from npx sluice alerts list)`,
    );
    return 1;
  }
  return withDb(async (db) => {
    const ep = await db.alertEpisode.findUnique({
      where: { id: BigInt(id) },
      select: { rule: { select: { pipeline: { select: { name: true } } } } },
    });
    if (!ep) {
      console.error(`no alert #${id}: npx sluice alerts list shows the open ones`);
      return 1;
    }
    const pipeline = ep.rule.pipeline?.name ?? null;
    const who = await authorizeCli(db, opts.as, "alert.respond", pipeline ? { pipeline } : null);
    if (!who) return EXIT_NOT_ALLOWED;
    const actor = { userId: who.actor.id, label: who.actor.email, from: { origin: "cli" as const } };
    const r = await (verb === "ack" ? acknowledgeAlert : resolveAlert)(db, actor, {
      episodeId: id,
      pipeline,
      note,
    });
    console.log(
      `alert #${r.episodeId} on ${pipeline ?? "the fleet"}: ${r.state} by ${who.actor.email}${verb === "ack" ? " (no more reminders; it resolves when its condition clears)" : ""}`,
    );
    return 0;
  });
}

export async function alertsSilenceCommand(
  pipeline: string | undefined,
  reason: string,
  opts: { for?: string; rule?: string; as?: string },
): Promise<number> {
  if (!pipeline) {
    console.error(
      "which pipeline? npx sluice alerts silence <pipeline> --for <duration, e.g. 2h> [--rule <kind>] <reason>",
    );
    return 1;
  }
  let ms: number;
  try {
    if (!opts.for) throw new Error("missing");
    ms = parseDuration(opts.for);
  } catch {
    console.error(
      `--for: a silence needs an expiry, as a duration such as 30m, 2h or 1d${opts.for ? ` (got "${opts.for}")` : ""}`,
    );
    return 1;
  }
  return withDb(async (db) => {
    const who = await authorizeCli(db, opts.as, "alert.respond", { pipeline });
    if (!who) return EXIT_NOT_ALLOWED;
    const s = await silenceAlerts(
      db,
      { userId: who.actor.id, label: who.actor.email, from: { origin: "cli" } },
      {
        pipeline,
        ...(opts.rule ? { kind: opts.rule as never } : {}),
        expiresAt: new Date(Date.now() + ms),
        reason,
      },
    );
    console.log(
      `${pipeline}: ${opts.rule ?? "all rules"} silenced until ${s.expiresAt.toISOString()} by ${who.actor.email}: notifications off, alerts still evaluated (silence ${s.id})`,
    );
    return 0;
  });
}

function formatAlert(a: TAlertView): string {
  const where = a.pipeline ? `${a.pipeline}${a.version !== null ? ` v${a.version}` : ""}` : "the fleet";
  const extra = [
    a.silenced ? "silenced" : null,
    a.acknowledgedBy ? `acked by ${a.acknowledgedBy}` : null,
    a.resolvedBy ? `resolved by ${a.resolvedBy}` : null,
    ...a.deliveries.map(
      (d) =>
        `${d.kind} ${d.status}${d.to ? ` to ${d.to}` : ""}${d.lastError && d.status !== "delivered" ? `: ${d.lastError}` : ""}`,
    ),
  ]
    .filter(Boolean)
    .join("; ");
  return `#${a.id.padEnd(5)} ${a.state.padEnd(12)} ${a.severity.padEnd(8)} ${a.kind} on ${where} since ${a.startedAt.toISOString()}: ${a.summary} [value ${formatRuleValue(a.kind, a.value)} vs ${formatRuleValue(a.kind, a.threshold)}]${extra ? ` (${extra})` : ""}`;
}

async function withDb(fn: (db: PrismaClient) => Promise<number>): Promise<number> {
  const services = await connect();
  const db = createPrismaClient(services.pool);
  try {
    return await fn(db);
  } catch (err) {
    if (err instanceof ServiceError || (err instanceof Error && err.name === "ZodError")) {
      console.error(`alerts: ${err instanceof ServiceError ? err.message : zodMessage(err)}`);
      return 1;
    }
    console.error(`alerts: ${(err as Error).message}`);
    return isRetriable(err) ? 2 : 1;
  } finally {
    await db.$disconnect();
    await services.close();
  }
}

function zodMessage(err: Error): string {
  const issues = (err as unknown as { issues?: { message: string }[] }).issues;
  return issues ? issues.map((i) => i.message).join("; ") : err.message;
}
