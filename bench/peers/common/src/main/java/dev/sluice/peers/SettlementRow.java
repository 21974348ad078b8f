package dev.sluice.peers;

import java.io.Serializable;
import java.math.BigDecimal;

/** One merchant's settlement window, as the sink table holds it. */
public record SettlementRow(
    String merchantId, long windowStartMs, long windowEndMs, BigDecimal settled, BigDecimal refunded, long events)
    implements Serializable {}
