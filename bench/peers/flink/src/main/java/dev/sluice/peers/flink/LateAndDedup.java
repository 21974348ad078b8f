package dev.sluice.peers.flink;

import dev.sluice.peers.PaymentEvent;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Keyed by event_id. Sluice's late rule, per event: an event time behind the watermark is late
 * (Flink's window operator alone would only drop rows whose whole window is behind it). Then dedup:
 * the first event of an id passes; its key is kept until the watermark passes the event's time
 * (Sluice's `dedupe.within: watermark`) — after that a repeat is late anyway.
 */
final class LateAndDedup extends KeyedProcessFunction<String, PaymentEvent, PaymentEvent> {
  private static final long serialVersionUID = 1L;
  private final LongCounter late = new LongCounter();
  private final LongCounter duplicate = new LongCounter();
  private transient ValueState<Boolean> seen;

  @Override
  public void open(OpenContext context) {
    seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Boolean.class));
    getRuntimeContext().addAccumulator("late", late);
    getRuntimeContext().addAccumulator("duplicate", duplicate);
  }

  @Override
  public void processElement(PaymentEvent e, Context ctx, Collector<PaymentEvent> out) throws Exception {
    if (e.getEventTimeMs() < ctx.timerService().currentWatermark()) {
      late.add(1);
      return;
    }
    if (seen.value() != null) {
      duplicate.add(1);
      return;
    }
    seen.update(Boolean.TRUE);
    ctx.timerService().registerEventTimeTimer(e.getEventTimeMs() + 1);
    out.collect(e);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<PaymentEvent> out) {
    seen.clear();
  }
}
