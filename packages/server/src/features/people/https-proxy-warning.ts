import type { FastifyBaseLogger, FastifyInstance } from "fastify";

/**
 * The session cookie is `Secure` only when the server knows it is reached over HTTPS (people.routes.ts:
 * an https TESTBAY_PUBLIC_URL, or X-Forwarded-Proto from a trusted proxy). Behind a TLS-terminating proxy
 * with neither, the cookie goes out without `Secure` and nothing says so: API.md §10 asks for a warning
 * that names the setting. Logged at start when proxies are trusted but the public URL is not https, and at
 * the first request that says it came over HTTPS (X-Forwarded-Proto: https), once per process.
 */
const fix =
  "set TESTBAY_PUBLIC_URL to the https:// URL people use (e.g. https://testbay.example.com/v1), so the session cookie is Secure";

export function registerHttpsProxyWarning(
  app: FastifyInstance,
  logger: FastifyBaseLogger,
  publicUrl: string | undefined,
  trustedProxies: readonly string[],
): void {
  if (publicUrl?.startsWith("https:")) return;
  if (trustedProxies.length > 0) {
    logger.warn(
      { setting: "TESTBAY_PUBLIC_URL" },
      `TESTBAY_TRUSTED_PROXIES names proxies, but TESTBAY_PUBLIC_URL is not an https URL: if they terminate TLS, ${fix}`,
    );
  }
  let warned = false;
  app.addHook("onRequest", (request, _reply, done) => {
    if (!warned && request.headers["x-forwarded-proto"]?.toString().toLowerCase().startsWith("https")) {
      warned = true;
      logger.warn(
        { setting: "TESTBAY_PUBLIC_URL" },
        `A request came through an HTTPS proxy (X-Forwarded-Proto: https), but TESTBAY_PUBLIC_URL is not an https URL: ${fix}`,
      );
    }
    done();
  });
}
