package dev.sluice.peers.flink;

import dev.sluice.peers.PaymentEvent;
import java.math.BigDecimal;
import org.apache.flink.api.common.functions.AggregateFunction;

/** The three measures: settled = sum(amount), refunded = sum(amount) if type == 'refund', events = count(). */
final class SettlementAggregate implements AggregateFunction<PaymentEvent, SettlementAggregate.Acc, SettlementAggregate.Acc> {
  private static final long serialVersionUID = 1L;

  /** A POJO, so Flink serializes it without Kryo. */
  public static final class Acc {
    public BigDecimal settled = BigDecimal.ZERO;
    public BigDecimal refunded = BigDecimal.ZERO;
    public long events;

    public Acc() {}
  }

  @Override
  public Acc createAccumulator() {
    return new Acc();
  }

  @Override
  public Acc add(PaymentEvent e, Acc acc) {
    acc.settled = acc.settled.add(e.getAmount());
    if ("refund".equals(e.getType())) acc.refunded = acc.refunded.add(e.getAmount());
    acc.events++;
    return acc;
  }

  @Override
  public Acc getResult(Acc acc) {
    return acc;
  }

  @Override
  public Acc merge(Acc a, Acc b) {
    Acc m = new Acc();
    m.settled = a.settled.add(b.settled);
    m.refunded = a.refunded.add(b.refunded);
    m.events = a.events + b.events;
    return m;
  }
}
