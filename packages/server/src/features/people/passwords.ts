import { randomBytes } from "node:crypto";

/** Shorter passwords are refused when a person chooses one (API.md §10: changed in the dashboard). */
export const minimumPasswordLength = 12;
/** Long enough for any passphrase, short enough that hashing one costs what hashing any other does. */
export const maximumPasswordLength = 1024;

/**
 * A password the server makes up (user create, the first start's admin): 144 random bits as 24 URL-safe
 * characters, so it survives copying from a terminal or JSON and needs no quoting in a shell.
 */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}

/** Why a chosen password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < minimumPasswordLength) {
    return `must be at least ${minimumPasswordLength} characters long`;
  }
  if (password.length > maximumPasswordLength) {
    return `must be at most ${maximumPasswordLength} characters long`;
  }
  return undefined;
}
