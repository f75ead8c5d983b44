/**
 * The W3C WebDriver error bodies the agent answers with when it cannot relay a command itself (the session has
 * ended, the path is not a WebDriver path, Appium is gone). The statuses are those of the W3C error table, as in
 * the server's catalogue (packages/server/src/features/sessions/w3c-errors.ts), which the agent does not import:
 * the two packages share only the SDK. Errors Appium returns are relayed unchanged and never pass through here.
 */

const w3cStatus = {
  "invalid argument": 400,
  "invalid session id": 404,
  "unknown command": 404,
  "session not created": 500,
  "unknown error": 500,
} as const;

export type AgentW3cError = keyof typeof w3cStatus;

export interface W3cAnswer {
  status: number;
  body: unknown;
}

/** `stacktrace` stays empty: the agent's own stack means nothing to the team's tests. */
export function w3cError(error: AgentW3cError, message: string): W3cAnswer {
  return { status: w3cStatus[error], body: { value: { error, message, stacktrace: "" } } };
}

/** Thrown when a session cannot be created; `error` and `message` are what `reportReady` sends as `failed`. */
export class SessionNotCreatedError extends Error {
  readonly error: string;

  constructor(message: string, error = "session not created") {
    super(message);
    this.name = "SessionNotCreatedError";
    this.error = error;
  }
}
