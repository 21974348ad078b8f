package dev.sluice.peers.flink;

import dev.sluice.peers.DecodePayment;
import dev.sluice.peers.PaymentEvent;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Kafka value → PaymentEvent by the contract; a malformed value is dropped (Sluice dead-letters it). */
final class PaymentDeserializer implements KafkaRecordDeserializationSchema<PaymentEvent> {
  private static final long serialVersionUID = 1L;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<PaymentEvent> out) {
    PaymentEvent e = DecodePayment.decode(record.value());
    if (e != null) out.collect(e);
  }

  @Override
  public TypeInformation<PaymentEvent> getProducedType() {
    return TypeInformation.of(PaymentEvent.class);
  }
}
