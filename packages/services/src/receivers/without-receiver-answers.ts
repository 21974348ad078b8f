// What a receiver answered a webhook or a notification (`lastResponse`: the start of its body) can say
// anything — an internal service's banner, a stack trace, a token echoed back — so only the people who
// run the pipeline see it (its owners and operators, and admins; the console decides per procedure).
// Everyone else gets the same answer with it left out: statuses and errors stay.

/** `value` with every `lastResponse` inside it (objects and arrays, any depth) set to null. */
export function withoutReceiverAnswers<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => withoutReceiverAnswers(v)) as T;
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype)
    return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === "lastResponse" ? null : withoutReceiverAnswers(v)]),
  ) as T;
}
