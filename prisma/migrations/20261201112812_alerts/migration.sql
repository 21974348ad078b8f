-- CreateTable
CREATE TABLE "alert_rules" (
    "id" TEXT NOT NULL,
    "pipeline_id" TEXT,
    "kind" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "threshold" DOUBLE PRECISION,
    "for_seconds" INTEGER NOT NULL,
    "clear_for_seconds" INTEGER NOT NULL,
    "repeat_seconds" INTEGER NOT NULL DEFAULT 3600,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "pending_since" TIMESTAMPTZ(3),
    "last_evaluated_at" TIMESTAMPTZ(3),
    "last_value" DOUBLE PRECISION,
    "updated_by" TEXT NOT NULL DEFAULT 'system',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_rules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_episodes" (
    "id" BIGSERIAL NOT NULL,
    "rule_id" TEXT NOT NULL,
    "pipeline_id" TEXT,
    "pipeline_version" INTEGER,
    "state" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "fired_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "value" DOUBLE PRECISION,
    "threshold" DOUBLE PRECISION,
    "summary" TEXT NOT NULL,
    "clear_since" TIMESTAMPTZ(3),
    "acknowledged_at" TIMESTAMPTZ(3),
    "acknowledged_by" TEXT,
    "ack_note" TEXT,
    "resolved_at" TIMESTAMPTZ(3),
    "resolved_by" TEXT,
    "notified_at" TIMESTAMPTZ(3),
    "last_notified_at" TIMESTAMPTZ(3),
    "reminders" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "alert_episodes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_episode_events" (
    "id" BIGSERIAL NOT NULL,
    "episode_id" BIGINT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "type" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "note" TEXT NOT NULL DEFAULT '',
    "value" DOUBLE PRECISION,

    CONSTRAINT "alert_episode_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_silences" (
    "id" TEXT NOT NULL,
    "pipeline_id" TEXT,
    "rule_id" TEXT,
    "reason" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    "ended_by" TEXT,

    CONSTRAINT "alert_silences_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_notifications" (
    "id" BIGSERIAL NOT NULL,
    "episode_id" BIGINT NOT NULL,
    "team_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "dedup_key" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "alert_notifications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_evaluators" (
    "id" TEXT NOT NULL,
    "owner" TEXT,
    "epoch" BIGINT NOT NULL DEFAULT 0,
    "lease_until" TIMESTAMPTZ(3),
    "last_tick_at" TIMESTAMPTZ(3),

    CONSTRAINT "alert_evaluators_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "alert_rules_pipeline_id_kind_key" ON "alert_rules"("pipeline_id", "kind");

-- CreateIndex
CREATE INDEX "alert_episodes_state_fired_at_idx" ON "alert_episodes"("state", "fired_at");

-- CreateIndex
CREATE INDEX "alert_episodes_pipeline_id_fired_at_idx" ON "alert_episodes"("pipeline_id", "fired_at");

-- CreateIndex
CREATE INDEX "alert_episode_events_episode_id_at_idx" ON "alert_episode_events"("episode_id", "at");

-- CreateIndex
CREATE INDEX "alert_silences_expires_at_idx" ON "alert_silences"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "alert_notifications_dedup_key_key" ON "alert_notifications"("dedup_key");

-- CreateIndex
CREATE INDEX "alert_notifications_status_next_attempt_at_idx" ON "alert_notifications"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "alert_notifications_episode_id_idx" ON "alert_notifications"("episode_id");

-- AddForeignKey
ALTER TABLE "alert_rules" ADD CONSTRAINT "alert_rules_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_episodes" ADD CONSTRAINT "alert_episodes_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_episode_events" ADD CONSTRAINT "alert_episode_events_episode_id_fkey" FOREIGN KEY ("episode_id") REFERENCES "alert_episodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_silences" ADD CONSTRAINT "alert_silences_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_silences" ADD CONSTRAINT "alert_silences_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_notifications" ADD CONSTRAINT "alert_notifications_episode_id_fkey" FOREIGN KEY ("episode_id") REFERENCES "alert_episodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_notifications" ADD CONSTRAINT "alert_notifications_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Hand-written (not in the Prisma datamodel):
-- A fleet rule (pipeline_id NULL) is unique per kind too.
CREATE UNIQUE INDEX "alert_rules_fleet_kind_key" ON "alert_rules"("kind") WHERE "pipeline_id" IS NULL;
-- At most one unresolved episode per rule: a second evaluator that raced past the lease could not open a duplicate.
CREATE UNIQUE INDEX "alert_episodes_open_per_rule_key" ON "alert_episodes"("rule_id") WHERE "resolved_at" IS NULL;
-- A silence names what it silences, and it ends.
ALTER TABLE "alert_silences" ADD CONSTRAINT "alert_silences_target_check" CHECK ("pipeline_id" IS NOT NULL OR "rule_id" IS NOT NULL);
ALTER TABLE "alert_silences" ADD CONSTRAINT "alert_silences_expiry_check" CHECK ("expires_at" > "created_at");
INSERT INTO "alert_evaluators" ("id") VALUES ('workers'), ('watchdog');
