// Where a pipeline's result goes, chosen from its spec once per runner: the ledger's sink table
// (written by commit-batch itself), or a stateful operator — event-time windows, CDC apply-changes,
// or a webhook — that prepares before the commit and writes inside it.
import type pg from "pg";
import { parseDuration, type TCompiledSpec, type TResolvedWebhookSink } from "@sluice/pipeline-spec";
import { CdcOperator } from "../cdc/cdc-operator";
import { ConfigurationError } from "../errors";
import { outboundFrom } from "../webhook/outbound";
import { servingName, type SinkTableMap } from "../store/physical-sink-table";
import { ensureServingView } from "../store/serving-views";
import { ensureSinkTable, outputSinkTable, type SinkTable } from "../store/sink-table";
import { findPipelineId } from "../webhook/delivery-ledger";
import { WebhookDelivery, type WebhookDeliveryOptions } from "../webhook/webhook-delivery";
import { WebhookOperator } from "../webhook/webhook-operator";
import { WindowOperator } from "../window/window-operator";
import type { ResultOperator } from "../operator/result-operator";
import type { PartitionGroup } from "../store/partition-group";

export interface OpenedResult {
  /** The ledger's sink table, written by commit-batch (absent when an operator writes the result). */
  sink?: SinkTable;
  operator?: ResultOperator;
}

/** Tuning of webhook retries (tests shorten the backoff). */
export type WebhookTuning = Pick<WebhookDeliveryOptions, "backoffBaseMs" | "maxBackoffMs" | "concurrency">;

export interface ResultContext {
  pool: pg.Pool;
  pipelineVersionId: string;
  /** The version's physical tables (pipeline_versions.sink_tables): a sink writes its own, never the serving view. */
  sinkTables: SinkTableMap;
  /** The output this result is ("" for a pipeline with one sink): it names the operator's state. */
  output?: string;
  /**
   * Resolves `urlFromEnv` / `headersFromEnv` of a webhook sink and the process's outbound settings
   * (SLUICE_OUTBOUND_ALLOW, SLUICE_SIGNING_KEY); the engine itself never reads the environment.
   */
  env?: (name: string) => string | undefined;
  webhook?: WebhookTuning;
  /**
   * The partition group this runner runs (the version is read in groups): window and CDC state is
   * shared by the groups and merged in each commit; the webhook ledger fences on this group's lease.
   */
  group?: PartitionGroup;
}

/** `compiled` is a spec with one result: a pipeline with a top-level sink, or one output's view. */
export async function openResult(ctx: ResultContext, compiled: TCompiledSpec): Promise<OpenedResult> {
  const { spec } = compiled;
  const target = spec.sink;
  if (!target)
    throw new ConfigurationError(
      `pipeline "${spec.name}": open each of its outputs, not the pipeline itself`,
    );
  const output = ctx.output ?? "";
  const pgSink = target.postgres;
  if (spec.aggregate) {
    if (!pgSink) {
      const hook = await openWebhook(ctx, compiled, target.webhook!);
      return {
        operator: new WindowOperator(
          ctx.pool,
          ctx.pipelineVersionId,
          compiled,
          { kind: "webhook", deliver: async (rows, input) => countsOf(await hook.deliverRows(rows, input)) },
          output,
        ),
      };
    }
    const table = await physicalTable(ctx, spec);
    return {
      operator: new WindowOperator(
        ctx.pool,
        ctx.pipelineVersionId,
        compiled,
        { kind: "table", table },
        output,
        { shared: ctx.group !== undefined },
      ),
    };
  }
  if (spec.cdc) {
    if (!pgSink)
      throw new ConfigurationError(
        `pipeline "${spec.name}": cdc applies changes to a table: use a postgres sink`,
      );
    const table = await physicalTable(ctx, spec);
    return {
      operator: new CdcOperator(
        ctx.pool,
        ctx.pipelineVersionId,
        compiled,
        table,
        spec.source.kafka.topic,
        output,
        { shared: ctx.group !== undefined },
      ),
    };
  }
  if (!pgSink) return { operator: await openWebhook(ctx, compiled, target.webhook!) };
  return { sink: await physicalTable(ctx, spec) };
}

/** The version's own physical table for this output, created if missing or checked against its columns. */
async function physicalTable(ctx: ResultContext, spec: TCompiledSpec["spec"]): Promise<SinkTable> {
  const serving = servingName(spec.sink!.postgres!.table);
  const physical = ctx.sinkTables[serving];
  if (!physical)
    throw new ConfigurationError(
      `pipeline "${spec.name}": version ${ctx.pipelineVersionId} has no physical table for ${serving}: register the version (registration names its tables) before running it`,
    );
  const table = outputSinkTable(spec, physical)!;
  await ensureSinkTable(ctx.pool, table);
  await ensureServingView(ctx.pool, serving, physical, ctx.pipelineVersionId);
  return table;
}

/** The webhook operator of a spec with a webhook sink: its target resolved (env), its ledger scope found. */
export async function openWebhook(
  ctx: Omit<ResultContext, "sinkTables">,
  compiled: TCompiledSpec,
  hook: TResolvedWebhookSink,
): Promise<WebhookOperator> {
  const name = compiled.spec.name;
  const fromEnv = (variable: string, what: string) => {
    const value = ctx.env?.(variable);
    if (value === undefined || value === "")
      throw new ConfigurationError(
        `pipeline "${name}": ${what} comes from the environment variable ${variable}, which is not set: set it for the worker`,
      );
    return value;
  };
  const url = hook.url ?? fromEnv(hook.urlFromEnv!, "the webhook URL");
  const headers = { ...hook.headers };
  for (const [header, variable] of Object.entries(hook.headersFromEnv))
    headers[header] = fromEnv(variable, `header ${header}`);
  const pipelineId = await findPipelineId(ctx.pool, ctx.pipelineVersionId);
  if (!pipelineId)
    throw new ConfigurationError(
      `pipeline version ${ctx.pipelineVersionId} is not registered: register it before running (the webhook ledger is kept per pipeline)`,
    );
  const outbound = outboundFrom(ctx.env);
  const sender = { kind: "pipeline" as const, name };
  const signing = outbound.signingSecret(sender);
  if ("problem" in signing) throw new ConfigurationError(`pipeline "${name}": webhook ${signing.problem}`);
  const delivery = new WebhookDelivery(ctx.pool, {
    target: { url, method: hook.method, headers, timeoutMs: parseDuration(hook.timeout) },
    outbound,
    sender,
    idempotencyHeader: hook.idempotencyHeader,
    maxAttempts: hook.maxAttempts,
    ...ctx.webhook,
  });
  return new WebhookOperator(compiled, pipelineId, ctx.pipelineVersionId, delivery, ctx.group?.no);
}

const countsOf = (r: {
  sent: number;
  alreadyDelivered: number;
  retries: number;
  failedKeys: Map<string, string>;
}) => ({
  sent: r.sent,
  alreadyDelivered: r.alreadyDelivered,
  retries: r.retries,
  failed: r.failedKeys.size,
});
