package dev.sluice.peers;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

/**
 * Decodes one Kafka value by the settlements contract (packages/pipeline-spec/examples/
 * merchant-settlements.yaml): event_id, type, merchant_id, currency strings; amount a decimal;
 * event_time an ISO-8601 timestamp; seq an optional integer; any other field allowed (Sluice
 * rescues it). Anything else — not JSON, cut short, a required field missing, a field of the wrong
 * JSON type — is malformed: Sluice dead-letters or quarantines such a row, the peers count it and
 * drop it. Types are checked on the JSON token, so `"event_id": true` is malformed, not "true".
 */
public final class DecodePayment {
  private static final JsonFactory JSON = new JsonFactory();
  private static final Pattern DECIMAL = Pattern.compile("-?\\d+(\\.\\d+)?");

  private DecodePayment() {}

  /** The event, or null when the value is malformed. */
  public static PaymentEvent decode(byte[] value) {
    if (value == null || value.length == 0) return null;
    try (JsonParser p = JSON.createParser(value)) {
      if (p.nextToken() != JsonToken.START_OBJECT) return null;
      PaymentEvent e = new PaymentEvent();
      String eventTime = null;
      for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
        if (t != JsonToken.FIELD_NAME) return null;
        String field = p.currentName();
        JsonToken v = p.nextToken();
        switch (field) {
          case "event_id" -> e.setEventId(text(p, v));
          case "type" -> e.setType(text(p, v));
          case "merchant_id" -> e.setMerchantId(text(p, v));
          case "currency" -> e.setCurrency(text(p, v));
          case "event_time" -> eventTime = text(p, v);
          case "amount" -> e.setAmount(decimal(p, v));
          case "seq" -> {
            if (v != JsonToken.VALUE_NULL && v != JsonToken.VALUE_NUMBER_INT) return null;
          }
          case "campaign" -> {
            if (v != JsonToken.VALUE_NULL) text(p, v);
          }
          default -> p.skipChildren();
        }
      }
      if (p.nextToken() != null) return null; // trailing bytes after the object
      if (e.getEventId() == null || e.getType() == null || e.getMerchantId() == null
          || e.getCurrency() == null || e.getAmount() == null || eventTime == null) return null;
      e.setEventTimeMs(OffsetDateTime.parse(eventTime).toInstant().toEpochMilli());
      return e;
    } catch (java.io.IOException | DateTimeParseException | WrongType ex) {
      return null;
    }
  }

  private static final class WrongType extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WrongType() { super(null, null, false, false); }
  }

  private static String text(JsonParser p, JsonToken v) throws java.io.IOException {
    if (v != JsonToken.VALUE_STRING) throw new WrongType();
    return p.getText();
  }

  private static BigDecimal decimal(JsonParser p, JsonToken v) throws java.io.IOException {
    if (v == JsonToken.VALUE_NUMBER_INT || v == JsonToken.VALUE_NUMBER_FLOAT) return p.getDecimalValue();
    if (v != JsonToken.VALUE_STRING) throw new WrongType();
    String s = p.getText();
    if (!DECIMAL.matcher(s).matches()) throw new WrongType();
    return new BigDecimal(s);
  }
}
