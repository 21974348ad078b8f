// `sluice signing-secret <pipeline>` / `sluice signing-secret --team <slug>`: the Standard Webhooks
// secret a receiver verifies Sluice's requests with — a pipeline's webhook sink (its team's owners and
// admins may see it) or a team's alert notifications (admins). Derived from SLUICE_SIGNING_KEY, which
// this process needs the same as the workers'; each showing is in the audit log.
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { signingKeyProblem, signingSecretFor, type TSender } from "@sluice/outbound-http";
import { recordAuditEvent } from "@sluice/services";
import { authorizeCli, cliAuditWho, EXIT_NOT_ALLOWED } from "../actor";
import { connect } from "../connect";

export async function signingSecretCommand(
  target: { pipeline: string } | { team: string },
  opts: { as?: string | undefined },
): Promise<number> {
  const key = loadEnv(ZServiceEnv).SLUICE_SIGNING_KEY;
  const problem = signingKeyProblem(key);
  if (problem) {
    console.error(`no signing secret: ${problem}`);
    return 1;
  }
  const services = await connect();
  const db = createPrismaClient(services.pool);
  try {
    const sender = await findSender(db, target);
    if ("missing" in sender) {
      console.error(sender.missing);
      return 1;
    }
    const who =
      "pipeline" in target
        ? await authorizeCli(db, opts.as, "pipeline.register", { pipeline: target.pipeline })
        : await authorizeCli(db, opts.as, "admin.teams", null);
    if (!who) return EXIT_NOT_ALLOWED;
    await recordAuditEvent(db, {
      ...cliAuditWho(who),
      action: "signing_secret.show",
      target: { type: sender.kind, id: sender.id, label: sender.label },
      reason: "shown to configure a receiver",
    });
    console.log(signingSecretFor(key!, sender.sender));
    console.error(
      `the Standard Webhooks secret of ${sender.label}: give it to the receiver, which verifies webhook-id, webhook-timestamp and webhook-signature with it (docs/security.md)`,
    );
    return 0;
  } finally {
    await db.$disconnect();
    await services.close();
  }
}

async function findSender(
  db: ReturnType<typeof createPrismaClient>,
  target: { pipeline: string } | { team: string },
): Promise<{ sender: TSender; kind: string; id: string; label: string } | { missing: string }> {
  if ("pipeline" in target) {
    const p = await db.pipeline.findUnique({ where: { name: target.pipeline }, select: { id: true } });
    if (!p) return { missing: `no pipeline named "${target.pipeline}"` };
    return {
      sender: { kind: "pipeline", name: target.pipeline },
      kind: "pipeline",
      id: p.id,
      label: `pipeline ${target.pipeline}'s webhook`,
    };
  }
  const t = await db.team.findUnique({ where: { slug: target.team }, select: { id: true, name: true } });
  if (!t) return { missing: `no team with the slug "${target.team}" (see the Admin page → Teams)` };
  return {
    sender: { kind: "team", slug: target.team },
    kind: "team",
    id: t.id,
    label: `${t.name}'s alert notifications`,
  };
}
