// Single sign-on (OpenID Connect) from the environment: when SLUICE_SSO_ISSUER, _CLIENT_ID and
// _CLIENT_SECRET are set, the sign-in page offers it. The provider is the auth library's generic
// OAuth plugin with OIDC discovery (ID tokens verified against the issuer's keys, PKCE, state).
import type { TWebEnv } from "../web-env";

export const SSO_PROVIDER_ID = "sso";

export interface TSsoConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The ID token / userinfo claim that lists the user's groups. */
  groupsClaim: string;
  scopes: string[];
  /** The button's label: "Sign in with <label>". */
  label: string;
}

export function ssoConfigFrom(env: TWebEnv): TSsoConfig | null {
  const {
    SLUICE_SSO_ISSUER: issuer,
    SLUICE_SSO_CLIENT_ID: clientId,
    SLUICE_SSO_CLIENT_SECRET: clientSecret,
  } = env;
  if (!issuer || !clientId || !clientSecret) return null;
  return {
    issuer: issuer.replace(/\/$/, ""),
    clientId,
    clientSecret,
    groupsClaim: env.SLUICE_SSO_GROUPS_CLAIM,
    scopes: env.SLUICE_SSO_SCOPES.split(/[\s,]+/).filter(Boolean),
    label: env.SLUICE_SSO_LABEL,
  };
}
