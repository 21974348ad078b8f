// Spec objects for tests: small, valid, and fresh on every call so a test can change one field.

/** Untyped on purpose: tests reach into a spec to break one field at a time, as a user's file would. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TLooseSpec = Record<string, any>;

/** A valid append ledger over the demo producer's payment events. */
export function ledgerSpec(): TLooseSpec {
  return {
    name: "payments-ledger",
    owner: "payments-data",
    source: { kafka: { topic: "payments" } },
    contract: {
      fields: {
        event_id: "string",
        type: "string",
        merchant_id: "string",
        customer_id: "string",
        seq: "int",
        amount: "decimal",
        currency: "string",
        card_country: "string?",
        event_time: "timestamp",
      },
    },
    eventTime: { column: "event_time", watermarkDelay: "10m" },
    dedupe: { key: ["event_id"], within: "watermark" },
    expectations: [{ name: "positive_amount", expr: "amount > 0", action: "drop" }],
    sink: { postgres: { table: "payments_ledger" } },
  };
}

/** A valid windowed aggregate (update mode) over the same events. */
export function settlementsSpec(): TLooseSpec {
  return {
    ...ledgerSpec(),
    name: "merchant-settlements",
    transform: { filter: "type in ['settlement', 'refund']" },
    aggregate: {
      window: { tumbling: "5m" },
      groupBy: ["merchant_id"],
      measures: { settled: "sum(amount)", events: "count()" },
      outputMode: "update",
    },
    sink: { postgres: { table: "merchant_settlement_5m" } },
  };
}

/** A valid SCD2 CDC pipeline. */
export function cdcSpec(): TLooseSpec {
  return {
    name: "customer-status",
    owner: "risk",
    source: { kafka: { topic: "customer-changes" } },
    contract: { fields: { customer_id: "string", status: "string", op: "string", version: "int" } },
    cdc: { key: ["customer_id"], sequenceBy: "version", deleteWhen: "op == 'D'", scdType: 2 },
    sink: { postgres: { table: "customer_status" } },
  };
}

/** The enriched ledger joined with another pipeline's SCD2 history instead of a changelog topic. */
export function joinedPipelineSpec(): TLooseSpec {
  const spec = joinedSpec();
  spec.join.dimension = {
    pipeline: "customer-status",
    key: ["customer_id"],
    contract: { fields: { customer_id: "string", status: "string", risk_score: "int?", version: "int" } },
  };
  return spec;
}

/** A valid pipeline with two outputs of different lateness over the same payments. */
export function splitSpec(): TLooseSpec {
  const { sink: _sink, aggregate: _aggregate, ...shared } = settlementsSpec();
  const aggregate = (allowedLateness: string) => ({
    window: { tumbling: "5m" },
    groupBy: ["merchant_id"],
    measures: { settled: "sum(amount)", events: "count()" },
    allowedLateness,
  });
  return {
    ...shared,
    name: "settlement-views",
    outputs: {
      fraud: { aggregate: aggregate("20m"), sink: { postgres: { table: "merchant_fraud_5m" } } },
      finance: {
        watermarkDelay: "10m",
        aggregate: { ...aggregate("2d"), outputMode: "append" },
        sink: { postgres: { table: "merchant_finance_5m" } },
      },
    },
  };
}

/** A valid ledger enriched with the customer's status as of each payment. */
export function joinedSpec(): TLooseSpec {
  return {
    ...ledgerSpec(),
    name: "payments-enriched",
    join: {
      dimension: {
        kafka: { topic: "customer-changes" },
        contract: {
          fields: {
            customer_id: "string",
            status: "string",
            risk_score: "int?",
            op: "string",
            changed_at: "timestamp",
            version: "int",
          },
        },
        key: ["customer_id"],
        eventTime: { column: "changed_at", watermarkDelay: "10m" },
        sequenceBy: "version",
        deleteWhen: "op == 'D'",
      },
      on: { customer_id: "customer_id" },
      fields: { customer_status: "status", customer_risk: "risk_score", customer_version: "version" },
      waitFor: "15m",
    },
    sink: { postgres: { table: "payments_enriched" } },
  };
}
