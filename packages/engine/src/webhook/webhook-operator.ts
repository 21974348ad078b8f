// A pipeline whose sink is a webhook: each result row is delivered (webhook-delivery.ts) before the
// batch commits; the commit then records the batch as usual. A row whose delivery was given up after
// maxAttempts (or a permanent 4xx) becomes a dead letter with the last error — never silent.
import { outputColumns, type TColumn, type TCompiledSpec } from "@sluice/pipeline-spec";
import type { SinkRow } from "../batch/process-batch";
import type { OperatorInput, PreparedResult, ResultOperator } from "../operator/result-operator";
import type { ResultRow } from "../store/write-result";
import { idempotencyKey, type WebhookDelivery } from "./webhook-delivery";

export class WebhookOperator implements ResultOperator {
  readonly kind = "webhook";
  private readonly columns: TColumn[];

  constructor(
    private readonly compiled: TCompiledSpec,
    private readonly pipelineId: string,
    private readonly pipelineVersionId: string,
    private readonly delivery: WebhookDelivery,
    /** The partition group this operator delivers for: its ledger writes fence on the group's lease. */
    private readonly group?: number,
  ) {
    this.columns = outputColumns(compiled.spec);
  }

  async prepare(input: OperatorInput): Promise<PreparedResult> {
    const keyOf = (row: SinkRow) => this.keyFor(row.values);
    const report = await this.deliverRows(
      input.rows.map((r) => r.values),
      input,
    );
    const failed = input.rows.flatMap((row) => {
      const reason = report.failedKeys.get(keyOf(row));
      return reason ? [{ row, reason }] : [];
    });
    return {
      stale: 0,
      failed,
      write: async () => ({ rows: 0, bytes: 0 }),
      report: {
        kind: "webhook",
        sent: report.sent,
        alreadyDelivered: report.alreadyDelivered,
        retries: report.retries,
        failed: report.failedKeys.size,
      },
    };
  }

  /** Delivers result rows (also used for an aggregate's final windows). */
  async deliverRows(rows: ResultRow[], input: OperatorInput) {
    const deliveries = rows.map((values) => ({ key: this.keyFor(values), payload: this.payload(values) }));
    const r = await this.delivery.deliver(this.scope(input.epoch), input.batchId, deliveries);
    return { sent: r.sent, alreadyDelivered: r.alreadyDelivered, retries: r.retries, failedKeys: r.failed };
  }

  /** Sends up to `limit` deliveries an operator re-queued after they failed (requeued-deliveries.ts). */
  resendRequeued(epoch: number, limit: number) {
    // jsonb keeps no key order: put the recorded body's fields back in column order, as first sent.
    const inColumnOrder = (stored: Record<string, unknown>) => ({
      ...Object.fromEntries(
        this.columns.filter((c) => c.name in stored).map((c) => [c.name, stored[c.name]]),
      ),
      ...stored,
    });
    return this.delivery.resendRequeued(this.scope(epoch), limit, inColumnOrder);
  }

  private scope(epoch: number) {
    return {
      pipelineId: this.pipelineId,
      pipelineVersionId: this.pipelineVersionId,
      epoch,
      ...(this.group === undefined ? {} : { group: this.group }),
    };
  }

  private keyFor(values: ResultRow): string {
    const hook = this.compiled.spec.sink!.webhook!;
    return idempotencyKey(
      this.compiled.spec.name,
      hook.idempotencyKey.map((c) => values[c]),
    );
  }

  /** The JSON body: the output columns, dates as ISO text, decimals as exact text. */
  private payload(values: ResultRow): Record<string, unknown> {
    return Object.fromEntries(
      this.columns.map((c) => {
        const v = values[c.name];
        return [c.name, v instanceof Date ? v.toISOString() : (v ?? null)];
      }),
    );
  }
}
