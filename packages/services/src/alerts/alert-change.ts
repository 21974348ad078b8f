// What every change to alerts shares: who does it and from where (for the audit log), and refusals
// the edges turn into 404 / 409 / 400 with the message as is.
import type { TAuditOrigin } from "../audit/record-audit-event";
import { ServiceError } from "../service-error";

export interface TAlertActor {
  /** The user's id; null for a CLI actor without a user row. */
  userId: string | null;
  /** "operator@sluice.local" — recorded as acknowledged_by, created_by, … */
  label: string;
  from: TAuditOrigin;
}

export class AlertChangeError extends ServiceError {
  declare readonly kind: "not_found" | "conflict" | "invalid";
}
