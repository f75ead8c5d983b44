// The server's validation messages are Ajv's (packages/server/src/http/error-handler.ts passes them on as
// `errors[].message`): "must NOT have fewer than 1 characters" is exact but not how people talk. Forms show them
// through this: a field may have its own words for a message (an empty plan name: "Give the plan a name"), and
// Ajv's usual wordings read as sentences; anything else shows as the server wrote it.

/** Ajv's wordings and how a form says them; `$1` is the number or text Ajv put in. */
const rewordings: ReadonlyArray<readonly [RegExp, (match: RegExpExecArray) => string]> = [
  [/^must NOT have fewer than 1 characters$/, () => "must not be empty"],
  [/^must NOT have fewer than (\d+) characters$/, (m) => `needs at least ${m[1]} characters`],
  [/^must NOT have more than (\d+) characters$/, (m) => `is too long: at most ${m[1]} characters`],
  [/^must NOT have fewer than 1 items$/, () => "needs at least one item"],
  [/^must NOT have fewer than (\d+) items$/, (m) => `needs at least ${m[1]} items`],
  [/^must NOT have more than (\d+) items$/, (m) => `has too many items: at most ${m[1]}`],
  [/^must NOT have duplicate items/, () => "lists the same item twice"],
  [/^must be >= (\S+)$/, (m) => `must be at least ${m[1]}`],
  [/^must be <= (\S+)$/, (m) => `must be at most ${m[1]}`],
  [/^must be > (\S+)$/, (m) => `must be more than ${m[1]}`],
  [/^must be < (\S+)$/, (m) => `must be less than ${m[1]}`],
  [/^must be integer$/, () => "must be a whole number"],
  [/^must be number$/, () => "must be a number"],
  [/^must be string$/, () => "must be text"],
  [/^must be boolean$/, () => "must be true or false"],
  [/^must be equal to one of the allowed values$/, () => "is not one of the allowed values"],
];

/**
 * What a form shows for the server's `message` at a field: the field's own words for that message when it has
 * them (`own`, by Ajv's message), else Ajv's wording as a sentence, else the message as it came.
 */
export function humanMessage(message: string, own?: Readonly<Record<string, string>>): string {
  const mine = own?.[message];
  if (mine) return mine;
  for (const [pattern, say] of rewordings) {
    const match = pattern.exec(message);
    if (match) return say(match);
  }
  return message;
}
