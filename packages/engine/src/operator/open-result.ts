// Where a pipeline's result goes, chosen from its spec once per runner: the ledger's sink table
// (written by commit-batch itself), or a stateful operator — event-time windows, CDC apply-changes,
// or a webhook — that prepares before the commit and writes inside it.
import type pg from "pg";
import { outputColumns, type TCompiledSpec } from "@sluice/spec";
import { ConfigurationError } from "../errors";
import { ensureSinkTable, RESULT_METADATA_COLUMNS, sinkTableFor, type SinkTable } from "../store/sink-table";
import { CdcOperator } from "../cdc/cdc-operator";
import { WindowOperator } from "../window/window-operator";
import type { ResultOperator } from "./result-operator";

export interface OpenedResult {
  /** The ledger's sink table, written by commit-batch (absent when an operator writes the result). */
  sink?: SinkTable;
  operator?: ResultOperator;
}

export interface ResultContext {
  pool: pg.Pool;
  pipelineVersionId: string;
}

export async function openResult(ctx: ResultContext, compiled: TCompiledSpec): Promise<OpenedResult> {
  const { spec } = compiled;
  const pgSink = spec.sink.postgres;
  if (spec.aggregate) {
    if (!pgSink) throw new ConfigurationError(`pipeline "${spec.name}": an aggregate with a webhook sink is not supported yet: use a postgres sink`);
    const table: SinkTable = { ...sinkTableFor(pgSink.table, outputColumns(spec), pgSink.key, pgSink.mode), metadata: RESULT_METADATA_COLUMNS };
    await ensureSinkTable(ctx.pool, table);
    return { operator: new WindowOperator(ctx.pool, ctx.pipelineVersionId, compiled, { kind: "table", table }) };
  }
  if (spec.cdc) {
    if (!pgSink) throw new ConfigurationError(`pipeline "${spec.name}": cdc applies changes to a table: use a postgres sink`);
    const table = sinkTableFor(pgSink.table, outputColumns(spec), pgSink.key, pgSink.mode);
    await ensureSinkTable(ctx.pool, table);
    return { operator: new CdcOperator(ctx.pool, ctx.pipelineVersionId, compiled, table, spec.source.kafka.topic) };
  }
  if (!pgSink) throw new ConfigurationError(`pipeline "${spec.name}": webhook sinks are not supported by this engine version yet`);
  const sink = sinkTableFor(pgSink.table, outputColumns(spec), pgSink.key, pgSink.mode);
  await ensureSinkTable(ctx.pool, sink);
  return { sink };
}
