// @sluice/outbound-http: the one home of Sluice's outbound HTTP (webhook sinks, alert notifications).
export { addressRefusal, parseAllowlist, type TAllowEntry } from "./address-policy";
export { OutboundRefusedError } from "./guarded-agent";
export { outboundFromEnv } from "./outbound-from-env";
export {
  ANSWER_EXCERPT_CHARS,
  createOutboundHttp,
  MAX_ANSWER_BYTES,
  type TOutboundAnswer,
  type TOutboundHttp,
  type TOutboundOptions,
  type TOutboundRequest,
} from "./outbound-http";
export {
  MIN_SIGNING_KEY_LENGTH,
  signatureHeaders,
  signingKeyProblem,
  signingSecretFor,
  type TSender,
} from "./webhook-signature";
