// Sends a batch's results to a webhook, each once per idempotency key (product.md: external side
// effects). Before the batch commits: claim every key in the ledger, skip keys already delivered,
// send the rest with retries and exponential backoff, and record each outcome at once — so a batch
// re-run after a crash never sends a key whose success was recorded. A crash between a request and
// its recorded success sends that key again, with the same Idempotency-Key header: the receiver's
// idempotency is the last line of defense for that one window. Requests go through
// @sluice/outbound-http: refused before connecting when the address is not allowed, signed with the
// pipeline's secret (Standard Webhooks; webhook-id is the idempotency key).
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import {
  beginAttempt,
  claimDeliveries,
  findRequeued,
  recordAttemptFailed,
  recordDelivered,
  type LedgerScope,
} from "./delivery-ledger";
import type { TOutboundHttp, TSender } from "@sluice/outbound-http";
import { retryDelayMs } from "@sluice/retry-policy";

export interface HttpTarget {
  url: string;
  method: "POST" | "PUT";
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface WebhookDeliveryOptions {
  target: HttpTarget;
  outbound: TOutboundHttp;
  /** Whose secret signs the requests: the pipeline's. */
  sender: TSender;
  idempotencyHeader: string;
  maxAttempts: number;
  /** First retry after this long, doubling up to maxBackoffMs. Default 250 ms. */
  backoffBaseMs?: number;
  /** Default 10 s. */
  maxBackoffMs?: number;
  /** Requests in flight at once. Default 8. */
  concurrency?: number;
}

export interface Delivery {
  key: string;
  payload: Record<string, unknown>;
}

export interface DeliveryReport {
  sent: number;
  alreadyDelivered: number;
  retries: number;
  /** Keys given up (status failed), with the last error. */
  failed: Map<string, string>;
}

export class WebhookDelivery {
  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: WebhookDeliveryOptions,
  ) {}

  async deliver(scope: LedgerScope, batchId: number, deliveries: Delivery[]): Promise<DeliveryReport> {
    const unique = [...new Map(deliveries.map((d) => [d.key, d])).values()];
    const ledger = await claimDeliveries(this.pool, scope, batchId, unique);
    const report = emptyReport();
    const todo: Delivery[] = [];
    for (const d of unique) {
      const entry = ledger.get(d.key)!;
      if (entry.status === "delivered") report.alreadyDelivered++;
      else if (entry.status === "failed") report.failed.set(d.key, entry.lastError ?? "delivery failed");
      else todo.push(d);
    }
    await this.sendAll(scope, todo, report);
    return report;
  }

  /**
   * Sends up to `limit` deliveries an operator re-queued (requeued-deliveries.ts), with the body
   * recorded when the key was first claimed. They are in the ledger already (pending, attempts reset),
   * so there is nothing to claim; every attempt is still counted and fenced before it goes out, and a
   * key delivered meanwhile is skipped — a recorded success is never sent again.
   */
  async resendRequeued(
    scope: LedgerScope,
    limit: number,
    shape: (stored: Record<string, unknown>) => Record<string, unknown>,
  ): Promise<DeliveryReport & { found: number }> {
    const found = await findRequeued(this.pool, scope.pipelineId, limit);
    const report = emptyReport();
    await this.sendAll(
      scope,
      found.map((d) => ({ key: d.key, payload: shape(d.payload) })),
      report,
    );
    return { found: found.length, ...report };
  }

  private async sendAll(scope: LedgerScope, todo: Delivery[], report: DeliveryReport): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < todo.length) await this.deliverOne(scope, todo[next++]!, report);
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency ?? 8, todo.length) }, worker));
  }

  private async deliverOne(scope: LedgerScope, d: Delivery, report: DeliveryReport): Promise<void> {
    const { target, idempotencyHeader, maxAttempts, outbound, sender } = this.opts;
    const body = JSON.stringify(d.payload);
    for (;;) {
      const begun = await beginAttempt(this.pool, scope, d.key);
      if ("settled" in begun) {
        // Settled meanwhile by another sender of the key: counted as it ended, never as delivered when it failed.
        if (begun.settled.status === "failed")
          report.failed.set(d.key, begun.settled.lastError ?? "webhook delivery failed");
        else report.alreadyDelivered++;
        return;
      }
      const { attempt } = begun;
      if (attempt > 1) report.retries++;
      const outcome = await outbound.send({
        url: target.url,
        method: target.method,
        headers: { ...target.headers, [idempotencyHeader]: d.key },
        body,
        timeoutMs: target.timeoutMs,
        sign: { sender, messageId: d.key },
      });
      if (outcome.ok) {
        await recordDelivered(this.pool, scope, d.key, outcome.status);
        report.sent++;
        return;
      }
      const final = !outcome.retriable || attempt >= maxAttempts;
      const error = `${outcome.error} (attempt ${attempt} of ${maxAttempts})`;
      await recordAttemptFailed(this.pool, scope, d.key, {
        statusCode: outcome.status,
        error,
        response: outcome.body,
        final,
      });
      if (final) {
        report.failed.set(d.key, `webhook delivery failed after ${attempt} attempt(s): ${outcome.error}`);
        return;
      }
      // No jitter: the key's retries are spaced within this one batch, whose commit waits for them.
      await sleep(
        retryDelayMs(
          { baseMs: this.opts.backoffBaseMs ?? 250, capMs: this.opts.maxBackoffMs ?? 10_000 },
          attempt,
        ),
      );
    }
  }
}

const emptyReport = (): DeliveryReport => ({ sent: 0, alreadyDelivered: 0, retries: 0, failed: new Map() });

/** The header value that identifies an event to the receiver, the same for every version and retry. */
export function idempotencyKey(pipelineName: string, values: unknown[]): string {
  return [
    pipelineName,
    ...values.map((v) => encodeURIComponent(v instanceof Date ? v.toISOString() : String(v))),
  ].join(":");
}
