import { z } from "zod";

export const ZSignInInputSchema = z.object({
  email: z.email("Enter an email address, e.g. operator@sluice.local").max(320),
  password: z.string().min(1, "Enter your password").max(1024),
});
export type TSignInInput = z.infer<typeof ZSignInInputSchema>;
