// The cdc section (apply-changes): rows are changes to entities identified by `key`, applied in
// `sequenceBy` order; a delete condition removes (SCD1) or closes (SCD2) the current version.
import { z } from "zod";
import { ZColumnList, ZColumnRef, ZExpression } from "./spec-primitives";

const ZOperation = z.strictObject({
  /** The column that carries the operation (e.g. op: "I" | "U" | "D"). */
  column: ZColumnRef.optional(),
  /** CEL condition that marks a change as a delete, e.g. op == 'D'. */
  deleteWhen: ZExpression,
});

export const ZCdc = z
  .strictObject({
    key: ZColumnList,
    sequenceBy: ZColumnRef,
    operation: ZOperation.optional(),
    /** Shorthand for operation: { deleteWhen }. */
    deleteWhen: ZExpression.optional(),
    /** 1: keep only the current row per key; 2: keep history with valid_from / valid_to / is_current. */
    scdType: z.union([z.literal(1), z.literal(2)], { error: "scdType must be 1 or 2" }).default(1),
    /**
     * watermark: an applied change leaves the state once the watermark passes it and no later change
     * can need it (a deleted key is forgotten; SCD2 keeps the current version's point). Needs eventTime,
     * and event times that order each key's changes as sequenceBy does. Left out: kept for every key.
     */
    stateEviction: z.literal("watermark").optional(),
  })
  .superRefine((cdc, ctx) => {
    if (cdc.operation && cdc.deleteWhen !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["deleteWhen"],
        message: "deleteWhen is set twice: keep either cdc.deleteWhen or cdc.operation.deleteWhen",
      });
    }
  })
  // Canonical shape: the shorthand becomes operation: { deleteWhen }, so both spellings hash the same.
  .transform(({ deleteWhen, operation, ...rest }) => ({
    ...rest,
    ...(operation ? { operation } : deleteWhen !== undefined ? { operation: { deleteWhen } } : {}),
  }));

export type TCdc = z.output<typeof ZCdc>;

/** Columns an SCD2 history table adds next to the entity's columns. */
export const SCD2_COLUMNS = ["valid_from", "valid_to", "is_current"] as const;
