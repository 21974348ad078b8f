// @sluice/producer: seeded payment events for the demo, adversarial tests and benchmarks.
export { Prng, WeightedPicker, type Seed } from "./prng";
export {
  simulatedClock,
  realClock,
  DEFAULT_SIMULATED_START,
  type Clock,
  type SimulatedClockOptions,
} from "./clock";
export {
  PAYMENT_EVENT_TYPES,
  PAYMENT_EVENT_FIELDS,
  MAIN_CURRENCIES,
  OTHER_CURRENCIES,
  validatePaymentEvent,
  decodePaymentEvent,
  formatCents,
  type PaymentEvent,
  type PaymentEventType,
  type PaymentEventField,
  type ValidationResult,
} from "./payment-events";
export {
  MALFORMED_KINDS,
  type MalformedKind,
  type JsonValue,
  type ExtraFieldValue,
  type TypeChange,
  type DriftApplied,
} from "./adversarial";
export {
  resolveStreamOptions,
  OptionsError,
  DEFAULT_TYPE_WEIGHTS,
  type PaymentStreamOptions,
  type ResolvedStreamOptions,
} from "./options";
export {
  PaymentStream,
  type StreamMessage,
  type EventMessage,
  type DuplicateMessage,
  type MalformedMessage,
} from "./payment-stream";
export {
  ManifestBuilder,
  manifestToJSON,
  type Manifest,
  type ManifestDetail,
  type ManifestCounts,
  type ManifestEvent,
  type ManifestMalformed,
} from "./manifest";
export {
  createKafka,
  ensureTopic,
  deleteTopic,
  toKafkaMessage,
  isValidTopicName,
  DEFAULT_BROKERS,
  DEFAULT_PARTITIONS,
  DEFAULT_HEADERS,
  type KafkaClientOptions,
  type EnsureTopicOptions,
} from "./kafka-output";
export {
  PaymentProducer,
  producePayments,
  formatProgress,
  type PaymentProducerOptions,
  type ProducePaymentsOptions,
  type ProduceOptions,
  type RunOptions,
  type ProduceResult,
  type ProgressStats,
  type ProgressOptions,
} from "./payment-producer";
export {
  customerChangeFeed,
  changesInOrder,
  produceCustomerChanges,
  CUSTOMER_STATUSES,
  DEMO_CHANGE_FEED,
  type CustomerChange,
  type CustomerChangeOptions,
  type ProduceCustomerChangesOptions,
} from "./customer-changes";
