import { TestbayApiError } from "@testbay/client";

/** What to do instead of running with a client that is no agent: the same advice at start and later. */
export function agentClientAdvice(org: string | undefined): string {
  return (
    `Start the agent with an agent client: testbay-server client create --org ${org ?? "NAME"} --role agent, ` +
    "then set TESTBAY_CLIENT_ID and TESTBAY_CLIENT_SECRET to the client_id and client_secret it prints."
  );
}

/**
 * Did the server refuse the agent's credentials (a 401: from the token endpoint, a wrong ID, secret or audience or a
 * disabled client; or from GET /v1/me)? That is a configuration error. Anything else that stops the start (the
 * server unreachable: the SDK's TestbayGaveUpError after its retries; a 5xx; an answer it cannot read) may pass,
 * and a restart may cure it.
 */
export function credentialsRefused(error: unknown): error is TestbayApiError {
  return error instanceof TestbayApiError && error.status === 401;
}

/**
 * What the agent says when the server refuses its credentials at start (a 401 from the token endpoint or from
 * GET /v1/me): a configuration error that no restart fixes (API.md §8), so the message carries the admin command
 * that does, with the client's ID filled in. The secret is never printed.
 */
export function refusedAtStart(error: TestbayApiError, clientId: string): string {
  const refused = `cannot start: the server refused client ${clientId}'s credentials (${error.message})`;
  const create =
    "testbay-server client create --org NAME --role agent makes one; set TESTBAY_CLIENT_ID and " +
    "TESTBAY_CLIENT_SECRET to the client_id and client_secret it prints.";
  const noRestart = "Restarting the agent will not help.";
  if (error.reason === "client_disabled") {
    return `${refused}. Enable it: testbay-server client enable ${clientId}. Or use another agent client: ${create} ${noRestart}`;
  }
  return (
    `${refused}.${error.fix ? ` ${error.fix}` : ""} A wrong or lost secret: testbay-server client rotate ${clientId} ` +
    "prints a new one for TESTBAY_CLIENT_SECRET (the client's old tokens stop working). A wrong client ID, or no " +
    `agent client yet: ${create} ${noRestart}`
  );
}
