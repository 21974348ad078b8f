-- A spec with several outputs is reconciled output by output: one row per output ('' for a spec's
-- only sink), and the newest row of each output is that output's current reconciliation.
ALTER TABLE "rollout_reconciliations" ADD COLUMN "output" TEXT NOT NULL DEFAULT '';
