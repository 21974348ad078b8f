package dev.sluice.peers.flink;

import dev.sluice.peers.SettlementRow;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Adds the merchant and the window's bounds to its measures. */
final class SettlementWindowRow extends ProcessWindowFunction<SettlementAggregate.Acc, SettlementRow, String, TimeWindow> {
  private static final long serialVersionUID = 1L;

  @Override
  public void process(String merchant, Context ctx, Iterable<SettlementAggregate.Acc> accs, Collector<SettlementRow> out) {
    SettlementAggregate.Acc a = accs.iterator().next();
    TimeWindow w = ctx.window();
    out.collect(new SettlementRow(merchant, w.getStart(), w.getEnd(), a.settled, a.refunded, a.events));
  }
}
