import { ApiProblem } from "../../api/problem.ts";
import { humanMessage } from "../../format/validation-message.ts";

/**
 * The API's messages about one member of a refused body (`errors[].path`, e.g. `/email`), in people's words, for
 * the field that holds it; undefined when there are none.
 */
export function messagesAt(error: unknown, pointer: string): string[] | undefined {
  const errors = error instanceof ApiProblem ? error.problem.errors : undefined;
  if (!Array.isArray(errors)) return undefined;
  const messages = (errors as Array<{ path?: unknown; message?: unknown }>)
    .filter((item) => item.path === pointer && typeof item.message === "string")
    .map((item) => humanMessage(item.message as string));
  return messages.length > 0 ? messages : undefined;
}
