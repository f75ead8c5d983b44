/**
 * The shape of an XCUITest identifier as `xcodebuild -only-testing:` / `-skip-testing:` take it:
 * `Target[/Class[/method]]`. Checked when a plan is saved, because xcodebuild itself only says so once a
 * device has been booted and the app installed, minutes into a run, and some wrong shapes (`Target/`,
 * `Class.method`) it silently treats as "no test matched" and passes with nothing run.
 */

/** A test target: Xcode allows spaces, dots and hyphens in target names ("Shop UITests"). */
const target = /^[\p{L}\p{N}_](?:[\p{L}\p{N}_ .-]*[\p{L}\p{N}_.-])?$/u;
/** A test class: a Swift or Objective-C type name. */
const testClass = /^[\p{L}_][\p{L}\p{N}_]*$/u;
/** A test method: an XCTest method name, or a Swift Testing function with its labels (`checkout(card:)`). */
const method = /^[\p{L}_][\p{L}\p{N}_]*(?:\([\p{L}\p{N}_:]*\))?$/u;

const shapes = [target, testClass, method];

/** Why `identifier` is not `Target[/Class[/method]]`; null when it is. */
export function testIdentifierProblem(identifier: string): string | null {
  const parts = identifier.split("/");
  if (parts.length > shapes.length) {
    return `has ${parts.length} parts; an identifier is Target, Target/Class or Target/Class/method`;
  }
  const names = ["test target", "class", "method"];
  for (const [i, part] of parts.entries()) {
    if (part === "")
      return `has an empty ${names[i]}; an identifier is Target, Target/Class or Target/Class/method`;
    if (!shapes[i]?.test(part)) return `${JSON.stringify(part)} is not a ${names[i]} name`;
  }
  return null;
}

/** The remedy for an identifier of the wrong shape. */
export const testIdentifierFix =
  "Write each only_testing / skip_testing entry as xcodebuild -only-testing takes it: the test target (its name in the .xctestrun, e.g. ShopUITests), optionally followed by /Class and /method: ShopUITests/CheckoutTests/testPayWithCard.";
