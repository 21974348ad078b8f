-- AlterTable
ALTER TABLE "offset_log" ADD COLUMN     "replay" JSONB;

-- CreateTable
CREATE TABLE "dead_letter_replays" (
    "id" BIGSERIAL NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "actor_user_id" TEXT,
    "actor" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "selection" JSONB NOT NULL,
    "accepted" INTEGER NOT NULL,
    "refused" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dead_letter_replays_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dead_letter_replay_items" (
    "id" BIGSERIAL NOT NULL,
    "replay_id" BIGINT NOT NULL,
    "dead_letter_id" BIGINT NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "batch_id" BIGINT,
    "outcome" TEXT,
    "detail" TEXT,
    "again_dead_letter_id" BIGINT,
    "applied_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dead_letter_replay_items_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "dead_letter_replays_pipeline_id_created_at_idx" ON "dead_letter_replays"("pipeline_id", "created_at");

-- CreateIndex
CREATE INDEX "dead_letter_replay_items_pipeline_version_id_status_id_idx" ON "dead_letter_replay_items"("pipeline_version_id", "status", "id");

-- CreateIndex
CREATE INDEX "dead_letter_replay_items_dead_letter_id_idx" ON "dead_letter_replay_items"("dead_letter_id");

-- AddForeignKey
ALTER TABLE "dead_letter_replay_items" ADD CONSTRAINT "dead_letter_replay_items_replay_id_fkey" FOREIGN KEY ("replay_id") REFERENCES "dead_letter_replays"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- At most one pending replay per dead letter: two requests at once cannot both queue it.
CREATE UNIQUE INDEX "dead_letter_replay_items_one_pending" ON "dead_letter_replay_items"("dead_letter_id") WHERE "status" = 'pending';
