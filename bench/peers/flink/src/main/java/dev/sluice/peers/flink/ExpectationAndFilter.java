package dev.sluice.peers.flink;

import dev.sluice.peers.PaymentEvent;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFilterFunction;

/** The expectation `amount > 0` (drop) and the filter `type in ['settlement', 'refund']`. */
final class ExpectationAndFilter extends RichFilterFunction<PaymentEvent> {
  private static final long serialVersionUID = 1L;
  private final LongCounter dropped = new LongCounter();
  private final LongCounter filtered = new LongCounter();

  @Override
  public void open(OpenContext context) {
    getRuntimeContext().addAccumulator("dropped", dropped);
    getRuntimeContext().addAccumulator("filtered", filtered);
  }

  @Override
  public boolean filter(PaymentEvent e) {
    if (!e.hasPositiveAmount()) {
      dropped.add(1);
      return false;
    }
    if (!e.isSettlementOrRefund()) {
      filtered.add(1);
      return false;
    }
    return true;
  }
}
