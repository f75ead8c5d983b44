import { call, type TestServer } from "../../../test/harness.ts";

let attempts = 0;

interface SlowdownLine {
  request_id?: string;
  msg?: string;
  delay_ms?: number;
  address?: string;
}

/**
 * Waits (bounded, in real time) for the server to log that request `requestId` is slowed down: the attempt
 * then waits on the server's clock, which the test moves.
 */
async function slowdownLogged(server: TestServer, requestId: string): Promise<SlowdownLine> {
  const deadline = Date.now() + 5000;
  for (;;) {
    for (const text of server.logs) {
      if (!text.includes(requestId)) continue;
      const line = JSON.parse(text) as SlowdownLine;
      if (line.request_id === requestId && line.msg === "sign-in slowed down after repeated failures")
        return line;
    }
    if (Date.now() > deadline) throw new Error(`sign-in ${requestId} was not slowed down within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A sign-in that the server slows down (login-limits.ts): sends it, waits for the server to say how long
 * it waits, moves the server's clock that far, and returns the answer with the delay and the address the
 * server counted the attempt against.
 */
export async function signInSlowedDown(
  server: TestServer,
  email: string,
  password: string,
  headers: Record<string, string> = {},
) {
  const requestId = `slowed-sign-in-${process.pid}-${++attempts}`;
  const answer = call(`${server.origin}/auth/login`, {
    json: { email, password },
    headers: { ...headers, "x-request-id": requestId },
  });
  const line = await slowdownLogged(server, requestId);
  server.clock.advance(line.delay_ms ?? 0);
  return { response: await answer, delayMs: line.delay_ms, address: line.address };
}
