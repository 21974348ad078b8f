package dev.sluice.peers.flink;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * Update mode, as close as a DataStream window gets to Sluice's: a window that changed is emitted at
 * the next flush tick of processing time (Sluice upserts every window a batch touched, once per
 * batch) and once more when the watermark passes its end if it changed since. Flink's built-in
 * ContinuousProcessingTimeTrigger would re-emit unchanged windows every tick, and EventTimeTrigger
 * only emits final values (the job's `mode=final`).
 */
final class UpdateTrigger extends Trigger<Object, TimeWindow> {
  private static final long serialVersionUID = 1L;
  private final long flushMs;
  private final ValueStateDescriptor<Boolean> dirtyState = new ValueStateDescriptor<>("dirty", Boolean.class);

  UpdateTrigger(long flushMs) {
    this.flushMs = flushMs;
  }

  @Override
  public TriggerResult onElement(Object element, long timestamp, TimeWindow window, TriggerContext ctx) throws Exception {
    ValueState<Boolean> dirty = ctx.getPartitionedState(dirtyState);
    if (dirty.value() == null) {
      dirty.update(Boolean.TRUE);
      ctx.registerEventTimeTimer(window.maxTimestamp());
      long now = ctx.getCurrentProcessingTime();
      ctx.registerProcessingTimeTimer(now - now % flushMs + flushMs);
    }
    return TriggerResult.CONTINUE;
  }

  @Override
  public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext ctx) throws Exception {
    return fireIfDirty(ctx);
  }

  @Override
  public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext ctx) throws Exception {
    return time == window.maxTimestamp() ? fireIfDirty(ctx) : TriggerResult.CONTINUE;
  }

  private TriggerResult fireIfDirty(TriggerContext ctx) throws Exception {
    ValueState<Boolean> dirty = ctx.getPartitionedState(dirtyState);
    if (dirty.value() == null) return TriggerResult.CONTINUE;
    dirty.clear();
    return TriggerResult.FIRE;
  }

  @Override
  public void clear(TimeWindow window, TriggerContext ctx) throws Exception {
    ctx.getPartitionedState(dirtyState).clear();
    ctx.deleteEventTimeTimer(window.maxTimestamp());
  }
}
