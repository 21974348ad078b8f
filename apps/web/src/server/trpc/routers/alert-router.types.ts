import {
  ZCreateAlertRuleInput,
  ZEndSilenceInput,
  ZRespondToAlertInput,
  ZSilenceAlertsInput,
  ZUpdateAlertRuleInput,
} from "@sluice/services";
import { z } from "zod";

export const ZAlertPipelineInputSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
});
export const ZRespondToAlertSchema = ZRespondToAlertInput;
export const ZSilenceAlertsSchema = ZSilenceAlertsInput;
export const ZEndSilenceSchema = ZEndSilenceInput;
export const ZUpdateAlertRuleSchema = ZUpdateAlertRuleInput;
export const ZCreateAlertRuleSchema = ZCreateAlertRuleInput;
