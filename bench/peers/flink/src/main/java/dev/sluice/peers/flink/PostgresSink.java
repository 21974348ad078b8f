package dev.sluice.peers.flink;

import dev.sluice.peers.PostgresUpsert;
import dev.sluice.peers.SettlementRow;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;

/**
 * Upserts window rows into Postgres in batches: the latest row per window is buffered and written
 * when the buffer holds 5,000 windows, when flush-ms has passed since the last write, at every
 * checkpoint and at the end. At-least-once (flushed before each checkpoint completes); whole-window
 * upserts are idempotent, so a replay from a checkpoint leaves the same rows. No transaction spans
 * the state and the sink, unlike Sluice's commit.
 */
final class PostgresSink extends RichSinkFunction<SettlementRow> implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;
  private static final int MAX_BUFFER = 5000;
  private final String jdbcUrl;
  private final String table;
  private final long flushMs;
  private transient PostgresUpsert upsert;
  private transient Map<String, SettlementRow> buffer;
  private transient long lastFlush;

  PostgresSink(String jdbcUrl, String table, long flushMs) {
    this.jdbcUrl = jdbcUrl;
    this.table = table;
    this.flushMs = flushMs;
  }

  @Override
  public void open(OpenContext context) throws Exception {
    upsert = new PostgresUpsert(jdbcUrl, table);
    buffer = new LinkedHashMap<>();
    lastFlush = System.currentTimeMillis();
  }

  @Override
  public void invoke(SettlementRow row, Context context) throws Exception {
    buffer.put(row.merchantId() + '\u0000' + row.windowStartMs(), row);
    if (buffer.size() >= MAX_BUFFER || System.currentTimeMillis() - lastFlush >= flushMs) flush();
  }

  private void flush() throws Exception {
    upsert.write(buffer.values());
    buffer.clear();
    lastFlush = System.currentTimeMillis();
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    flush();
  }

  @Override
  public void initializeState(FunctionInitializationContext context) {}

  @Override
  public void finish() throws Exception {
    flush();
  }

  @Override
  public void close() throws Exception {
    if (upsert != null) upsert.close();
  }
}
