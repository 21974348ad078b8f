import { auth } from "@/server/auth/auth";
import { authRoute } from "@/server/auth/auth-route";

export const { GET, POST } = authRoute(() => auth());
