-- A receiver's answer to a failed notification, kept apart from the error (the status only) so the
-- console can show it to the alert's pipeline's owners and operators only (docs/security.md).
ALTER TABLE "alert_notifications" ADD COLUMN "last_response" TEXT;
