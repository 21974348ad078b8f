-- CreateTable
CREATE TABLE "dead_letter_resolutions" (
    "id" BIGSERIAL NOT NULL,
    "dead_letter_id" BIGINT NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "actor_user_id" TEXT,
    "actor" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dead_letter_resolutions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "dead_letter_resolutions_dead_letter_id_key" ON "dead_letter_resolutions"("dead_letter_id");

-- CreateIndex
CREATE INDEX "dead_letter_resolutions_pipeline_version_id_created_at_idx" ON "dead_letter_resolutions"("pipeline_version_id", "created_at");

