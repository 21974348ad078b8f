// A real OpenID Connect provider (the `oidc-provider` package) as its own process, for the single
// sign-on tests and the browser tests: discovery, signed ID tokens with a groups claim, PKCE, and a
// plain login page that asks for a user name from TEST_IDENTITIES (no password: it is a test IdP).
//
//   node --import tsx packages/testing/src/oidc/oidc-provider-process.ts <port> <redirect uri>[,<redirect uri>…]
//
// Prints "oidc-provider listening <issuer>" once it answers; stops on SIGTERM.
import { createServer, type IncomingMessage } from "node:http";
import Provider from "oidc-provider";
import { TEST_IDENTITIES, TEST_OIDC_CLIENT, type TTestIdentity } from "./test-identities";

const port = Number(process.argv[2] ?? 0);
const redirectUris = (process.argv[3] ?? "").split(",").filter(Boolean);
if (redirectUris.length === 0) throw new Error("usage: oidc-provider-process.ts <port> <redirect uri>[,…]");

let provider: Provider | undefined;
const server = createServer((req, res) => {
  if (!provider) return void res.writeHead(503).end();
  const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(new URL(req.url ?? "/", "http://x").pathname);
  if (!match) return provider.callback()(req, res);
  (match[2] ? login(req, res) : loginPage(match[1]!, res)).catch((err: Error) =>
    res.writeHead(500).end(err.message),
  );
});

async function loginPage(uid: string, res: import("node:http").ServerResponse) {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><title>Test identity provider</title><h1>Test identity provider</h1>
<form method="post" action="/interaction/${uid}/login"><label>Username <input name="login" autofocus></label>
<button type="submit">Sign in</button></form><p>Known: ${Object.keys(TEST_IDENTITIES).join(", ")}</p>`);
}

async function login(req: IncomingMessage, res: import("node:http").ServerResponse) {
  const body = new URLSearchParams(
    await new Promise<string>((resolve) => {
      let data = "";
      req.on("data", (c: Buffer) => (data += c.toString()));
      req.on("end", () => resolve(data));
    }),
  );
  const account = body.get("login") as TTestIdentity;
  const details = await provider!.interactionDetails(req, res);
  if (!(account in TEST_IDENTITIES)) {
    return provider!.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: `unknown test user ${account}` },
      { mergeWithLastSubmission: false },
    );
  }
  const grant = new provider!.Grant({ accountId: account, clientId: details.params.client_id });
  grant.addOIDCScope(details.params.scope ?? "openid");
  const grantId = await grant.save();
  await provider!.interactionFinished(
    req,
    res,
    { login: { accountId: account }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  const issuer = `http://127.0.0.1:${typeof address === "object" && address ? address.port : port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: TEST_OIDC_CLIENT.clientId,
        client_secret: TEST_OIDC_CLIENT.clientSecret,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    scopes: ["openid", "email", "profile", "groups"],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    // The granted scopes' claims go into the ID token itself (where the console reads groups).
    conformIdTokenClaims: false,
    findAccount: (_ctx: unknown, id: string) => {
      const who = TEST_IDENTITIES[id as TTestIdentity];
      if (!who) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          email: who.email,
          email_verified: true,
          name: who.name,
          groups: [...who.groups],
        }),
      };
    },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    cookies: { keys: ["sluice-test-idp-cookie-key"] },
  });
  console.log(`oidc-provider listening ${issuer}`);
});

process.on("SIGTERM", () => server.close(() => process.exit(0)));
