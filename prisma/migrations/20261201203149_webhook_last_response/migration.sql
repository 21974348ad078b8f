-- The receiver's answer to a failed webhook attempt, kept apart from the error shown to everyone.
ALTER TABLE "webhook_deliveries" ADD COLUMN "last_response" TEXT;
