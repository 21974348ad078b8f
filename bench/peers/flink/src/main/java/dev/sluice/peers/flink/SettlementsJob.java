package dev.sluice.peers.flink;

import dev.sluice.peers.Args;
import dev.sluice.peers.PaymentEvent;
import java.time.Duration;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * The merchant-settlements pipeline (packages/pipeline-spec/examples/merchant-settlements.yaml) as a
 * Flink DataStream job: decode by the contract, expectation `amount > 0` (drop), filter settlements
 * and refunds, per-event late check against the watermark (10 minutes behind the slowest Kafka
 * partition), dedup by event_id while the watermark has not passed the event, 5-minute tumbling
 * event-time windows per merchant (sum, conditional sum, count), allowed lateness 0, upserted into
 * Postgres. The topic is read from the earliest to the latest offset at start (a bounded source), then
 * the job ends, so its wall time is the time to process that backlog.
 *
 * <p>Arguments (name=value): brokers, topic, jdbc, table, parallelism (2), mode (update: changed
 * windows upserted every flush-ms of processing time and when final, like Sluice's update mode; final:
 * each window written once when the watermark passes its end), flush-ms (1000), checkpoint-ms (0 =
 * checkpointing off), checkpoint-dir, group, align-ms (60000: watermark alignment's maximum drift; 0 =
 * off).
 */
public final class SettlementsJob {
  static final long WINDOW_MS = 5 * 60_000L;
  static final long WATERMARK_DELAY_MS = 10 * 60_000L;

  public static void main(String[] argv) throws Exception {
    Args args = new Args(argv);
    int parallelism = Integer.parseInt(args.get("parallelism", "2"));
    long checkpointMs = Long.parseLong(args.get("checkpoint-ms", "0"));
    String mode = args.get("mode", "update");
    long flushMs = Long.parseLong(args.get("flush-ms", "1000"));

    Configuration conf = new Configuration();
    conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
    if (checkpointMs > 0) {
      conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
      conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, "file://" + args.require("checkpoint-dir"));
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    if (checkpointMs > 0) env.enableCheckpointing(checkpointMs, CheckpointingMode.EXACTLY_ONCE);

    KafkaSource<PaymentEvent> source = KafkaSource.<PaymentEvent>builder()
        .setBootstrapServers(args.require("brokers"))
        .setTopics(args.require("topic"))
        .setGroupId(args.get("group", "sluice-peers-flink"))
        .setStartingOffsets(OffsetsInitializer.earliest())
        .setBounded(OffsetsInitializer.latest())
        .setDeserializer(new PaymentDeserializer())
        .build();

    // Per-partition watermarks (the Kafka source keeps one per split and emits their minimum), like
    // Sluice's watermark over the slowest partition.
    WatermarkStrategy<PaymentEvent> watermarks = WatermarkStrategy
        .<PaymentEvent>forBoundedOutOfOrderness(Duration.ofMillis(WATERMARK_DELAY_MS))
        .withTimestampAssigner((e, ts) -> e.getEventTimeMs());
    // Watermark alignment: a split (partition) more than align-ms of event time ahead of the slowest
    // is paused. Without it, on a backlog one subtask's partitions run far ahead of the other's, the
    // watermark (their minimum) trails the fast ones by many minutes, and events that far late are
    // accepted there — how many depends on thread timing, so results vary from run to run.
    long alignMs = Long.parseLong(args.get("align-ms", "60000"));
    if (alignMs > 0)
      watermarks = watermarks.withWatermarkAlignment("payments", Duration.ofMillis(alignMs), Duration.ofMillis(200));

    DataStream<PaymentEvent> accepted = env.fromSource(source, watermarks, "payments")
        .filter(new ExpectationAndFilter()).name("amount > 0, settlement or refund")
        .keyBy(PaymentEvent::getEventId)
        .process(new LateAndDedup()).name("late check, dedup by event_id");

    WindowedStream<PaymentEvent, String, TimeWindow> windows = accepted
        .keyBy(PaymentEvent::getMerchantId)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
        .allowedLateness(Duration.ZERO);
    if (mode.equals("update")) windows = windows.trigger(new UpdateTrigger(flushMs));
    else if (!mode.equals("final")) throw new IllegalArgumentException("mode must be update or final, not " + mode);

    windows.aggregate(new SettlementAggregate(), new SettlementWindowRow()).name("5-minute windows per merchant")
        .addSink(new PostgresSink(args.require("jdbc"), args.require("table"), flushMs)).name("postgres upsert");

    JobExecutionResult result = env.execute("sluice-peers-flink-settlements");
    // One line the benchmark command reads: what the job counted.
    System.out.println("COUNTS " + result.getAllAccumulatorResults());
  }
}
