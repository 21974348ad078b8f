// A schema change in a real browser against the stack scripts/e2e.sh starts (two workers running the
// e2e-ledger pipeline while the demo producer keeps sending): a producer starts sending a field the
// contract does not declare → the workers raise a schema change request by themselves (requester
// "system") with the field, its inferred type, counts and sample rows; the pipeline's owner sees it
// but may not approve it (no button, and the API refuses: change.approve is the operators'); an
// operator approves it; the new version is registered continuing the old checkpoint (same offsets),
// runs, and writes the new field into its new column — every event id produced once in the ledger.
// Every step is on the Audit page. Then a type mismatch on a pipeline of the test's own: events whose
// int field arrives as a fraction are quarantined → the workers raise a request proposing the safe
// widening (int → decimal) → an operator approves it → the card offers the quarantined rows this
// change fixes → replayed from the card, they reach the ledger exactly once. Screenshots in
// .data/test-results/screenshots/.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { Kafka, logLevel } from "kafkajs";
import { databaseUrl, expect, screenshot, test, repoRoot, sluiceAsAdmin } from "./fixtures";

const pipeline = process.env.SLUICE_E2E_PIPELINE;
const topic = process.env.SLUICE_E2E_TOPIC;
const brokers = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",");
const OWNER = "owner@sluice.local";
const APPROVER = "oncall@sluice.local";
const FIELD = "loyalty_tier";
const run = `drift-${Date.now().toString(36)}`;

const kafka = new Kafka({ brokers, clientId: "e2e-schema-change", logLevel: logLevel.NOTHING });

const shot = (page: Page, name: string) => screenshot(page, `schema-change-${name}.png`);

/** Payment events like the demo producer's, with ids of this run and the new field (or `seq` as a fraction). */
async function produceWithNewField(
  wave: string,
  n: number,
  to = topic!,
  change: "new field" | "fractional seq" | "none" = "new field",
): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${run}-${wave}-${i}`);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: to,
    acks: -1,
    messages: ids.map((event_id, i) => ({
      value: JSON.stringify({
        event_id,
        type: "settlement",
        merchant_id: `m-${i % 3}`,
        seq: change === "fractional seq" ? i + 0.5 : i,
        payment_id: `p-${event_id}`,
        customer_id: `c-${i % 5}`,
        amount: `${10 + i}.50`,
        currency: "EUR",
        card_country: "DE",
        event_time: new Date().toISOString(),
        ...(change === "new field" ? { [FIELD]: i % 2 === 0 ? "gold" : "silver" } : {}),
      }),
    })),
  });
  await producer.disconnect();
  return ids;
}

test.describe("Schema change", () => {
  test.skip(
    !databaseUrl || !pipeline || !topic,
    "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_PIPELINE, SLUICE_E2E_TOPIC)",
  );

  test("a new field raises a request with samples; the owner cannot approve; an operator does; the new version runs from the same offsets", async ({
    signIn,
    db,
  }) => {
    const v1 = (
      await db.query<{ id: string; version: number }>(
        `SELECT v.id, v.version FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 ORDER BY version DESC LIMIT 1`,
        [pipeline],
      )
    ).rows[0]!;
    const first = await produceWithNewField("a", 12);
    let cr: { id: string } | undefined;
    await expect
      .poll(
        async () => {
          const rows = await db.query<{
            id: string;
            payload: { observed: { field: string; count: number }[] };
          }>(
            `SELECT id::text, payload FROM change_requests WHERE kind = 'schema_change' AND requested_by = 'system' AND status = 'pending' AND pipeline_version_id = $1`,
            [v1.id],
          );
          cr = rows.rows.find((r) => r.payload.observed.some((o) => o.field === FIELD && o.count >= 12));
          return cr?.id;
        },
        { message: "the workers to raise a schema change request for the new field", timeout: 90_000 },
      )
      .toBeDefined();
    const requests = await db.query(
      `SELECT id FROM change_requests WHERE kind = 'schema_change' AND pipeline_version_id = $1 AND payload->'observed' @> $2::jsonb`,
      [v1.id, JSON.stringify([{ field: FIELD }])],
    );
    expect(requests.rowCount, "one request for the field").toBe(1);

    // The owner of the pipeline's team sees what their producer caused, and may not approve it.
    const owner = await signIn(OWNER);
    await owner.goto("/change-requests");
    const card = owner.getByTestId(`change-request-${cr!.id}`);
    await expect(card.getByTestId(`observed-${FIELD}`)).toHaveText(/unknown, rescued into _rescued\s*string/);
    await card.getByText(`Sample rows with ${FIELD}`).click();
    const samples = (await card.getByTestId(`samples-${FIELD}`).textContent()) ?? "";
    expect(
      first.some((id) => samples.includes(id)),
      "the samples are rows this test produced",
    ).toBe(true);
    await expect(card.getByTestId("schema-impact")).toContainText("Contract change: compatible");
    await expect(card.getByRole("button", { name: "Approve and apply" })).toHaveCount(0);
    const refused = await owner.evaluate(
      async ({ id, pipeline }) => {
        const res = await fetch("/api/trpc/change.approve", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ json: { id, pipeline } }),
        });
        return { status: res.status, body: await res.text() };
      },
      { id: cr!.id, pipeline: pipeline! },
    );
    expect(refused.status, refused.body).toBe(403);
    await shot(owner, "raised");

    const approver = await signIn(APPROVER);
    await approver.goto("/change-requests");
    const theirs = approver.getByTestId(`change-request-${cr!.id}`);
    await theirs.getByLabel(/Note/).fill("e2e: the new field is expected");
    await theirs.getByRole("button", { name: "Approve and apply" }).click();
    await expect(theirs.getByTestId("change-status")).toHaveText("applied", { timeout: 30_000 });
    await expect(theirs.getByTestId("schema-applied")).toContainText(
      `Version ${v1.version + 1} registered, continuing version ${v1.version}`,
    );
    await shot(approver, "applied");

    // The new version continues the old checkpoint and runs; the new field gets its column.
    const v2 = (
      await db.query<{ id: string; continued_from_id: string }>(
        `SELECT v.id, v.continued_from_id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 AND v.version = $2`,
        [pipeline, v1.version + 1],
      )
    ).rows[0]!;
    expect(v2.continued_from_id).toBe(v1.id);
    const result = (
      await db.query<{ result: { offsets: Record<string, number> } }>(
        `SELECT result FROM change_requests WHERE id = $1`,
        [cr!.id],
      )
    ).rows[0]!.result;
    let next: { progress: { sources: { partition: number; startOffset: number }[] } } | undefined;
    await expect(async () => {
      next = (
        await db.query<NonNullable<typeof next>>(
          `SELECT progress FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id LIMIT 1`,
          [v2.id],
        )
      ).rows[0];
      expect(next, "the new version's first batch").toBeDefined();
    }).toPass({ timeout: 90_000 });
    for (const s of next!.progress.sources)
      expect(s.startOffset, `partition ${s.partition} continues at the old checkpoint`).toBe(
        result.offsets[String(s.partition)] ?? s.startOffset,
      );
    const second = await produceWithNewField("b", 8);
    await expect
      .poll(
        async () =>
          (
            await db.query<{ n: string }>(
              `SELECT count(*)::text AS n FROM e2e_ledger WHERE event_id = ANY($1) AND ${FIELD} IS NOT NULL`,
              [second],
            )
          ).rows[0]!.n,
        { message: "the second wave in the ledger with its column", timeout: 90_000 },
      )
      .toBe(String(second.length));
    const all = await db.query<{ event_id: string }>(
      `SELECT event_id FROM e2e_ledger WHERE event_id = ANY($1) ORDER BY event_id`,
      [[...first, ...second]],
    );
    expect(
      all.rows.map((r) => r.event_id),
      "every produced id once",
    ).toEqual([...first, ...second].sort());
    const runs = await db.query<{ pipeline_version_id: string; status: string }>(
      `SELECT pipeline_version_id, status::text FROM pipeline_runs WHERE pipeline_version_id = ANY($1)`,
      [[v1.id, v2.id]],
    );
    expect(
      Object.fromEntries(runs.rows.map((r) => [r.pipeline_version_id === v1.id ? "v1" : "v2", r.status])),
    ).toEqual({ v1: "stopped", v2: "running" });

    await approver.goto("/audit");
    const filters = approver.getByRole("form", { name: "Filter the audit log" });
    await filters.getByLabel("Action").fill("change");
    await filters.getByRole("button", { name: "Filter" }).click();
    await expect
      .poll(
        () =>
          approver
            .getByTestId("audit-table")
            .locator("tbody tr")
            .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-action"))),
        { message: "the schema change's steps on the Audit page" },
      )
      .toEqual(expect.arrayContaining(["change.request", "change.approve", "change.apply"]));
    await shot(approver, "audit");
  });

  test("a type mismatch quarantines rows; the approved widening offers them for replay, and replayed they reach the ledger once", async ({
    signIn,
    db,
  }) => {
    // A ledger of its own on a topic only this test writes to (the demo producer's corrupt values would mix in).
    const name = `e2e-drift-${Date.now().toString(36)}`;
    const ownTopic = `sluice-${name}`;
    const table = name.replace(/-/g, "_");
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: ownTopic, numPartitions: 2 }], waitForLeaders: true });
    await admin.disconnect();
    const spec = readFileSync(path.join(repoRoot, "demo/pipelines/payments-ledger.yaml"), "utf8")
      .replace(/^name: payments-ledger/m, `name: ${name}`)
      .replace("topic: payments,", `topic: ${ownTopic},`)
      .replace("table: payments_ledger", `table: ${table}`);
    const specFile = path.join(mkdtempSync(path.join(tmpdir(), "sluice-e2e-")), `${name}.yaml`);
    writeFileSync(specFile, spec);
    const cli = sluiceAsAdmin;
    await cli("start", specFile, "e2e: a ledger whose producer changes a type");
    try {
      const good = await produceWithNewField("good", 10, ownTopic, "none");
      await expect
        .poll(
          async () => {
            // The sink table appears with the first batch's commit: until then there is nothing in it.
            const exists = await db.query(`SELECT to_regclass($1) IS NOT NULL AS e`, [table]);
            if (!exists.rows[0].e) return 0;
            return Number((await db.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
          },
          {
            message: "the good rows in the ledger",
            timeout: 90_000,
          },
        )
        .toBe(good.length);
      const v1 = (
        await db.query<{ id: string; version: number }>(
          `SELECT v.id, v.version FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
          [name],
        )
      ).rows[0]!;

      const fractional = await produceWithNewField("fraction", 10, ownTopic, "fractional seq");
      let cr: { id: string } | undefined;
      await expect
        .poll(
          async () => {
            const rows = await db.query<{
              id: string;
              payload: {
                observed: { field: string; outcome: string; count: number }[];
                proposed: { contract: { fields: Record<string, unknown> } };
              };
            }>(
              `SELECT id::text, payload FROM change_requests WHERE kind = 'schema_change' AND requested_by = 'system' AND status = 'pending' AND pipeline_version_id = $1`,
              [v1.id],
            );
            cr = rows.rows.find((r) =>
              r.payload.observed.some(
                (o) => o.field === "seq" && o.outcome === "quarantined" && o.count >= fractional.length,
              ),
            );
            return cr?.id;
          },
          { message: "a request proposing the widening of seq", timeout: 90_000 },
        )
        .toBeDefined();
      const quarantined = await db.query<{ event_id: string }>(
        `SELECT payload->>'event_id' AS event_id FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'quarantined' ORDER BY 1`,
        [v1.id],
      );
      expect(
        quarantined.rows.map((r) => r.event_id),
        "the fractional rows, and only they, were quarantined",
      ).toEqual([...fractional].sort());

      const approver = await signIn(APPROVER);
      await approver.goto("/change-requests");
      const card = approver.getByTestId(`change-request-${cr!.id}`);
      await card.getByLabel(/Note/).fill("e2e: seq may carry fractions now");
      await card.getByRole("button", { name: "Approve and apply" }).click();
      await expect(card.getByTestId("change-status"), "the widening to be applied").toHaveText("applied", {
        timeout: 30_000,
      });
      const fixed = card.getByTestId("fixed-quarantine");
      await expect(fixed).toContainText(
        `${fractional.length} row(s) of version ${v1.version} were quarantined for reasons this change fixes`,
      );
      await fixed
        .getByRole("button", { name: `Replay ${fractional.length} row(s) into version ${v1.version + 1}` })
        .click();
      await expect(
        card
          .getByTestId("fixed-replay-result")
          .filter({ hasText: `${fractional.length} row(s) queued into version ${v1.version + 1}` }),
      ).toBeVisible();
      await shot(approver, "fixed-replayed");

      // The workers apply the replay in the new version's batch: every id once, the replayed ones with their fractions.
      await expect
        .poll(
          async () =>
            Number(
              (await db.query(`SELECT count(*) FROM ${table} WHERE event_id = ANY($1)`, [fractional])).rows[0]
                .count,
            ),
          { message: "the replayed rows in the ledger", timeout: 90_000 },
        )
        .toBe(fractional.length);
      const ledger = await db.query<{ event_id: string; seq: string }>(
        `SELECT event_id, seq::text FROM ${table} ORDER BY event_id`,
      );
      expect(
        ledger.rows.map((r) => r.event_id),
        "every produced id exactly once",
      ).toEqual([...good, ...fractional].sort());
      expect(
        ledger.rows.filter((r) => fractional.includes(r.event_id)).every((r) => r.seq.endsWith(".5")),
        "the widened column keeps the fractions",
      ).toBe(true);
      const items = await db.query<{ status: string; outcome: string }>(
        `SELECT i.status, i.outcome FROM dead_letter_replay_items i JOIN dead_letters d ON d.id = i.dead_letter_id WHERE d.pipeline_version_id = $1`,
        [v1.id],
      );
      expect(items.rows.map((i) => `${i.status}:${i.outcome}`)).toEqual(fractional.map(() => "applied:sink"));
      // Replayed rows are no longer offered.
      await approver.reload();
      await expect(
        approver
          .getByTestId(`change-request-${cr!.id}`)
          .getByText(`No quarantined rows of version ${v1.version} are fixed by this change.`),
      ).toBeVisible();
    } finally {
      await cli("stop", name, "e2e: done").catch(() => undefined);
    }
  });
});
