// Contact points: where a team is paged (Slack, PagerDuty, email, Sluice's webhook event), each
// receiver's own format, delivery through one outbound door, tests and delivery history.
export {
  CONTACT_POINT_KINDS,
  CONTACT_POINT_KIND_INFO,
  ZContactPointFields,
  ZContactPointSecret,
  describeSecret,
  type TContactPointKind,
  type TContactPointFields,
  type TContactPointSecret,
} from "./contact-point-kinds";
export {
  createContactPoint,
  updateContactPoint,
  removeContactPoint,
  ZCreateContactPointInput,
  ZUpdateContactPointInput,
  ZRemoveContactPointInput,
} from "./manage-contact-points";
export { findContactPoints, type TContactPointView, type TContactPointDelivery } from "./find-contact-points";
export { sendTestNotification, ZSendTestNotificationInput } from "./send-test-notification";
export { sendToContactPoint, type TSendOptions, type TSendResult } from "./send-to-contact-point";
export { slackMessage, type TSlackMessage } from "./slack-message";
export {
  pagerDutyEvent,
  pagerDutyDedupKey,
  PAGERDUTY_EVENTS_URL,
  type TPagerDutyEvent,
} from "./pagerduty-event";
export { webhookEvent, type TWebhookEvent } from "./webhook-event";
export { emailMessage, type TEmailMessage } from "./email-message";
export { pipelineLink } from "./notification-words";
export type { TSmtpOptions } from "./send-email";
