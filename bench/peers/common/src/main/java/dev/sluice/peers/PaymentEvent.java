package dev.sluice.peers;

import java.io.Serializable;
import java.math.BigDecimal;

/**
 * The fields of a payment event the settlements pipeline uses. A JavaBean (getters and setters) so
 * Spark's bean encoder can turn it into columns; Flink treats it as a POJO.
 */
public class PaymentEvent implements Serializable {
  private static final long serialVersionUID = 1L;

  private String eventId;
  private String type;
  private String merchantId;
  private BigDecimal amount;
  private String currency;
  private long eventTimeMs;

  public PaymentEvent() {}

  public String getEventId() { return eventId; }
  public void setEventId(String v) { eventId = v; }
  public String getType() { return type; }
  public void setType(String v) { type = v; }
  public String getMerchantId() { return merchantId; }
  public void setMerchantId(String v) { merchantId = v; }
  public BigDecimal getAmount() { return amount; }
  public void setAmount(BigDecimal v) { amount = v; }
  public String getCurrency() { return currency; }
  public void setCurrency(String v) { currency = v; }
  public long getEventTimeMs() { return eventTimeMs; }
  public void setEventTimeMs(long v) { eventTimeMs = v; }

  /** The settlements pipeline's filter: `type in ['settlement', 'refund']`. */
  public boolean isSettlementOrRefund() {
    return "settlement".equals(type) || "refund".equals(type);
  }

  /** The pipeline's expectation `amount > 0` (action: drop). */
  public boolean hasPositiveAmount() {
    return amount.signum() > 0;
  }
}
