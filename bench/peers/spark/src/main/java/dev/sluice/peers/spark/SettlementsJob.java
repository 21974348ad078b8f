package dev.sluice.peers.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.timestamp_millis;
import static org.apache.spark.sql.functions.when;
import static org.apache.spark.sql.functions.window;

import dev.sluice.peers.DecodePayment;
import dev.sluice.peers.Args;
import dev.sluice.peers.PaymentEvent;
import dev.sluice.peers.PostgresUpsert;
import dev.sluice.peers.SettlementRow;
import java.math.BigDecimal;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.ForeachPartitionFunction;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;

/**
 * The merchant-settlements pipeline (packages/pipeline-spec/examples/merchant-settlements.yaml) as a
 * Spark Structured Streaming job in one JVM (local[2]): decode by the contract, expectation
 * `amount > 0` (drop), filter settlements and refunds, a 10-minute watermark, dedup by event_id within
 * the watermark (dropDuplicatesWithinWatermark, which also drops rows behind the watermark: Sluice's
 * per-event late rule), 5-minute tumbling windows per merchant, update output mode: each micro-batch
 * upserts the windows it changed into Postgres (foreachBatch). Trigger.AvailableNow: the backlog at
 * start is read in micro-batches of max-offsets offsets, then the job ends.
 *
 * <p>Arguments (name=value): brokers, topic, jdbc, table, checkpoint-dir, max-offsets (50000),
 * master (local[2]), state-store (hdfs | rocksdb).
 */
public final class SettlementsJob {
  public static void main(String[] argv) throws Exception {
    Args args = new Args(argv);
    String jdbc = args.require("jdbc");
    String table = args.require("table");

    SparkSession.Builder builder = SparkSession.builder()
        .appName("sluice-peers-spark-settlements")
        .master(args.get("master", "local[2]"))
        .config("spark.ui.enabled", "false")
        // One shuffle partition per core: the default 200 would make every micro-batch run 200 tiny
        // stateful tasks (and 200 state stores) on 2 cores.
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC");
    if ("rocksdb".equals(args.get("state-store", "")))
      builder = builder.config("spark.sql.streaming.stateStore.providerClass",
          "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider");
    SparkSession spark = builder.getOrCreate();

    Dataset<Row> raw = spark.readStream().format("kafka")
        .option("kafka.bootstrap.servers", args.require("brokers"))
        .option("subscribe", args.require("topic"))
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", args.get("max-offsets", "50000"))
        .option("failOnDataLoss", "true")
        .load();

    Dataset<PaymentEvent> events = raw.select(col("value"))
        .flatMap((FlatMapFunction<Row, PaymentEvent>) r -> {
          PaymentEvent e = DecodePayment.decode((byte[]) r.get(0));
          return e != null && e.hasPositiveAmount() && e.isSettlementOrRefund()
              ? Collections.singletonList(e).iterator()
              : Collections.emptyIterator();
        }, Encoders.bean(PaymentEvent.class));

    Dataset<Row> windows = events
        .withColumn("event_time", timestamp_millis(col("eventTimeMs")))
        .withWatermark("event_time", "10 minutes")
        .dropDuplicatesWithinWatermark("eventId")
        .groupBy(col("merchantId"), window(col("event_time"), "5 minutes"))
        .agg(
            sum(col("amount")).as("settled"),
            sum(when(col("type").equalTo("refund"), col("amount")).otherwise(lit(BigDecimal.ZERO))).as("refunded"),
            count(lit(1)).as("events"))
        .select(col("merchantId"), col("window.start").as("window_start"), col("window.end").as("window_end"),
            col("settled"), col("refunded"), col("events"));

    StreamingQuery query = windows.writeStream()
        .outputMode("update")
        .option("checkpointLocation", args.require("checkpoint-dir"))
        .trigger(Trigger.AvailableNow())
        .foreachBatch((VoidFunction2<Dataset<Row>, Long>) (batch, batchId) ->
            batch.foreachPartition((ForeachPartitionFunction<Row>) rows -> upsert(jdbc, table, rows)))
        .start();
    query.awaitTermination();
    spark.stop();
  }

  /** One partition of a micro-batch's changed windows (each window once: they are the aggregation's rows). */
  private static void upsert(String jdbc, String table, Iterator<Row> rows) throws Exception {
    List<SettlementRow> out = new ArrayList<>();
    try (PostgresUpsert upsert = new PostgresUpsert(jdbc, table)) {
      while (rows.hasNext()) {
        Row r = rows.next();
        out.add(new SettlementRow(r.getString(0), ((Timestamp) r.get(1)).getTime(), ((Timestamp) r.get(2)).getTime(),
            r.getDecimal(3), r.getDecimal(4), r.getLong(5)));
        if (out.size() == 5000) {
          upsert.write(out);
          out.clear();
        }
      }
      upsert.write(out);
    }
  }
}
