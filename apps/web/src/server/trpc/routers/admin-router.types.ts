import {
  ZCreateContactPointInput,
  ZRemoveContactPointInput,
  ZSendTestNotificationInput,
  ZUpdateContactPointInput,
  ZCreateSsoMappingInput,
  ZCreateTeamInput,
  ZCreateUserInput,
  ZDeleteSsoMappingInput,
  ZResetUserPasswordInput,
  ZSetTeamOnCallInput,
  ZSetUserDisabledInput,
  ZSetUserRoleInput,
  ZTeamMemberInput,
} from "@sluice/services";
import { z } from "zod";

// The services' own schemas: one definition of each field's rule and message.
export const ZAdminCreateUserSchema = ZCreateUserInput;
export const ZAdminSetRoleSchema = ZSetUserRoleInput;
export const ZAdminSetDisabledSchema = ZSetUserDisabledInput;
export const ZAdminResetPasswordSchema = ZResetUserPasswordInput;
export const ZAdminCreateTeamSchema = ZCreateTeamInput;
export const ZAdminTeamMemberSchema = ZTeamMemberInput;
export const ZAdminSetOnCallSchema = ZSetTeamOnCallInput;
export const ZAdminCreateContactPointSchema = ZCreateContactPointInput;
export const ZAdminUpdateContactPointSchema = ZUpdateContactPointInput;
export const ZAdminRemoveContactPointSchema = ZRemoveContactPointInput;
export const ZAdminTestContactPointSchema = ZSendTestNotificationInput;
export const ZAdminCreateSsoMappingSchema = ZCreateSsoMappingInput;
export const ZAdminDeleteSsoMappingSchema = ZDeleteSsoMappingInput;
export const ZNoInputSchema = z.void();
