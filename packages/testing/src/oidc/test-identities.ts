// The people the test identity provider knows, and the client it has registered for the console.
// Their groups exercise the console's SSO mapping (the demo seed maps payments-engineers → owner of
// Payments Data, risk-oncall → operator of Risk & Fraud); "contractors" maps to nothing.
export const TEST_IDENTITIES = {
  alice: { email: "alice@idp.example", name: "Alice Payments", groups: ["payments-engineers", "everyone"] },
  otto: { email: "otto@idp.example", name: "Otto On-call", groups: ["risk-oncall"] },
  mallory: { email: "mallory@idp.example", name: "Mallory Contractor", groups: ["contractors"] },
} as const;
export type TTestIdentity = keyof typeof TEST_IDENTITIES;

export const TEST_OIDC_CLIENT = {
  clientId: "sluice-console",
  clientSecret: "test-client-secret-not-for-production",
} as const;
