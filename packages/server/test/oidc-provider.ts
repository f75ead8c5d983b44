import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/**
 * A real OpenID provider (oidc-provider) on 127.0.0.1 for single sign-on tests (API.md §10). Its login and
 * consent pages are replaced by a handler that signs in whichever account `loginAs()` names and grants what the
 * client asked for, so a flow needs no form: fetch one redirect at a time, or a browser following them.
 *
 * Two steps, because each side must know the other's address first: `listenOidcProvider()` gives the issuer to
 * configure the server with; `serve()` then registers the server's callback and starts answering.
 */
export interface OidcProviderOptions {
  /** The registered client's redirect URI: `${server.origin}/auth/oidc/callback`. */
  redirectUri: string;
  clientId: string;
  clientSecret: string;
  /** The provider's accounts: claims by account ID. */
  accounts: Record<string, Record<string, unknown>>;
  /** Who the provider signs in at its next login step. */
  loginAs: () => string;
}

export interface TestOidcProvider {
  issuer: string;
  serve(options: OidcProviderOptions): void;
  close(): Promise<void>;
}

export async function listenOidcProvider(): Promise<TestOidcProvider> {
  let handle: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    serve(options) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: options.clientId,
            client_secret: options.clientSecret,
            redirect_uris: [options.redirectUri],
            token_endpoint_auth_method: "client_secret_post",
          },
        ],
        findAccount: (_ctx, id) => {
          const claims = options.accounts[id];
          return claims && { accountId: id, claims: () => ({ sub: id, ...claims }) };
        },
        claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["testbay_role"] },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        cookies: { keys: ["oidc-test-cookie-key"] },
        // Set only to keep the provider from noting its defaults on every run.
        ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600 },
      });
      const providerCallback = provider.callback();
      handle = (req, res) => {
        if (!req.url?.startsWith("/interaction/")) return void providerCallback(req, res);
        void (async () => {
          const details = await provider.interactionDetails(req, res);
          if (details.prompt.name === "login") {
            await provider.interactionFinished(req, res, { login: { accountId: options.loginAs() } });
            return;
          }
          const grant = new provider.Grant({
            accountId: String(details.session?.accountId),
            clientId: String(details.params.client_id),
          });
          grant.addOIDCScope(String(details.params.scope));
          const grantId = await grant.save();
          await provider.interactionFinished(
            req,
            res,
            { consent: { grantId } },
            { mergeWithLastSubmission: true },
          );
        })().catch((error: unknown) => res.writeHead(500).end(String(error)));
      };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
