// A real OpenID provider for the browser tests: `oidc-provider` (npm; OpenID Certified), on a
// loopback port, with the login pages it ships for development (any login name signs in as
// `NAME@example.test`, except `stranger`, who is `stranger@elsewhere.test`), consent given to
// its first-party clients, and faults the tests switch on: an ID token for another client
// (wrong audience) or one that has expired, both signed by the provider's own keys. Its keys
// can be rotated while it runs.

import { createServer } from "node:http";
import { generateKeyPairSync } from "node:crypto";
import Provider from "oidc-provider";

/** The e-mail of a login name. */
export function emailOf(login) {
  return login === "stranger" ? "stranger@elsewhere.test" : `${login}@example.test`;
}

function signingKey(kid) {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { ...privateKey.export({ format: "jwk" }), kid, alg: "ES256", use: "sig" };
}

/**
 * Starts the provider at `http://localhost:PORT` for a studio whose single sign-on comes back
 * to `redirectUri`. Resolves to `{ issuer, clientId, clientSecret, setFault, rotateKeys, close }`.
 */
export async function startProvider(redirectUri) {
  const clientSecret = "provider-client-secret-6512";
  const clients = ["llmtool", "other-app"].map((clientId) => ({
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    id_token_signed_response_alg: "ES256",
  }));
  let fault = null;
  let generation = 1;
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://localhost:${server.address().port}`;

  function make() {
    const provider = new Provider(issuer, {
      clients,
      jwks: { keys: [signingKey(`key-${generation}`)] },
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
      scopes: ["openid", "email", "profile"],
      features: { devInteractions: { enabled: true } },
      pkce: { required: () => true },
      findAccount: (ctx, sub) => ({
        accountId: sub,
        claims: () => ({ sub, email: emailOf(sub), email_verified: true, name: `${sub[0].toUpperCase()}${sub.slice(1)} Example` }),
      }),
      // The clients are the organisation's own: consent is given.
      async loadExistingGrant(ctx) {
        const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
        if (grantId) return ctx.oidc.provider.Grant.find(grantId);
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
        grant.addOIDCScope("openid email profile");
        await grant.save();
        return grant;
      },
    });
    provider.proxy = false;
    // The faults: the token endpoint's ID token replaced by one the provider signs for another
    // client, or one that expired an hour ago.
    provider.use(async (ctx, next) => {
      await next();
      if (!fault || ctx.path !== "/token" || !ctx.body?.id_token) return;
      const original = JSON.parse(Buffer.from(ctx.body.id_token.split(".")[1], "base64url"));
      const client = await provider.Client.find(fault === "audience" ? "other-app" : "llmtool");
      const token = new provider.IdToken({ sub: original.sub }, { ctx, client });
      for (const claim of ["sub", "nonce", "email", "email_verified", "name"]) {
        if (original[claim] !== undefined) token.set(claim, original[claim]);
      }
      const now = Math.floor(Date.now() / 1000);
      if (fault === "expired") token.set("iat", now - 7200);
      ctx.body.id_token = await token.issue({ use: "idtoken", expiresAt: fault === "expired" ? now - 3600 : undefined });
    });
    return provider;
  }

  let handler = make().callback();
  server.on("request", (request, response) => handler(request, response));
  return {
    issuer,
    clientId: "llmtool",
    clientSecret,
    setFault(kind) {
      fault = kind;
    },
    /** New signing keys (the old ones gone), as a provider rotating its keys. */
    rotateKeys() {
      generation += 1;
      handler = make().callback();
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
