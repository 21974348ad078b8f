-- Contact points: several per team (Slack, PagerDuty, email, Sluice's webhook event), each
-- notification addressed to one of them. A team's former on-call webhook becomes its first contact
-- point, of kind slack: its body was Slack's incoming-webhook format, which a receiver keeps getting.

CREATE TABLE "contact_points" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "secret_env" TEXT,
    "secret_value" TEXT,
    "endpoint" TEXT,
    "addresses" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contact_points_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "contact_points_team_id_name_key" ON "contact_points"("team_id", "name");
ALTER TABLE "contact_points" ADD CONSTRAINT "contact_points_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "contact_points" ("id", "team_id", "name", "kind", "secret_env", "secret_value", "created_by")
SELECT 'cp-' || "id", "id", 'on-call webhook', 'slack', "on_call_webhook_env", "on_call_webhook_url", 'migration'
  FROM "teams" WHERE "on_call_webhook_env" IS NOT NULL OR "on_call_webhook_url" IS NOT NULL;

ALTER TABLE "alert_notifications" ADD COLUMN "contact_point_id" TEXT,
ALTER COLUMN "episode_id" DROP NOT NULL;
CREATE INDEX "alert_notifications_contact_point_id_id_idx" ON "alert_notifications"("contact_point_id", "id");
ALTER TABLE "alert_notifications" ADD CONSTRAINT "alert_notifications_contact_point_id_fkey" FOREIGN KEY ("contact_point_id") REFERENCES "contact_points"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Notifications queued before: their body was rendered for the old webhook, not from facts; the
-- delivered and failed ones keep their history, what was still pending is closed, saying why.
UPDATE "alert_notifications" n SET "contact_point_id" = 'cp-' || n."team_id"
 WHERE EXISTS (SELECT 1 FROM "contact_points" c WHERE c."id" = 'cp-' || n."team_id");
UPDATE "alert_notifications" SET "status" = 'failed',
       "last_error" = 'not sent: queued before contact points; the alert shows on the Alerts page'
 WHERE "status" = 'pending';

ALTER TABLE "teams" DROP COLUMN "on_call_webhook_env",
DROP COLUMN "on_call_webhook_url";
