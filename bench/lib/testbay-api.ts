// Calls to a benchmark's Testbay server (bench/servers/testbay.ts) that set up what a benchmark measures.
import type { TestbayReady } from "../servers/testbay.ts";

/** A token for the server's ci client, from POST /v1/oauth/token. */
export async function requestToken(origin: string, ready: TestbayReady): Promise<string> {
  const response = await fetch(`${origin}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      grant_type: "client_credentials",
      client_id: ready.credentials.client_id,
      client_secret: ready.credentials.client_secret,
      audience: ready.audience,
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (response.status !== 200 || !body.access_token) {
    throw new Error(
      `POST /v1/oauth/token answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`,
    );
  }
  return body.access_token;
}

/** Registers an app with POST /v1/apps. */
export async function createApp(
  origin: string,
  token: string,
  app: { package_name: string; platform: "android" | "ios" },
): Promise<void> {
  const response = await fetch(`${origin}/v1/apps`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": token },
    body: JSON.stringify(app),
  });
  if (response.status !== 201) {
    throw new Error(`POST /v1/apps answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
  }
}
