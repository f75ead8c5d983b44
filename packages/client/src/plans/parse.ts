import type { ValidateFunction } from "ajv";
import { type Document, LineCounter, parseDocument } from "yaml";
import { displayPath, locate, type Position, pointerSegments } from "./locate.ts";
import { schemaIssues } from "./messages.ts";
import type { PlansFile } from "./plans-file.ts";
import { testbayYamlSchema } from "./testbay-yaml.schema.generated.ts";
import { validate as compiledValidator } from "./testbay-yaml.validate.generated.ts";

/** One problem of the file, at its line and column. */
export interface FileIssue extends Position {
  /** Where in the file's structure, e.g. `plans[0].steps[1].type`; "" before the message says it all. */
  path: string;
  message: string;
}

/** `testbay.yaml:12:9: plans[0].steps[1].type must be one of …`: the form editors and CI logs link up. */
export function formatIssue(fileName: string, issue: FileIssue): string {
  return `${fileName}:${issue.line}:${issue.col}: ${issue.path ? `${issue.path} ` : ""}${issue.message}`;
}

/** The file is not a valid testbay.yaml: every problem found, so one edit can fix them all. */
export class PlansFileError extends Error {
  override readonly name = "PlansFileError";
  constructor(
    readonly fileName: string,
    readonly issues: FileIssue[],
  ) {
    super(issues.map((issue) => formatIssue(fileName, issue)).join("\n"));
  }
}

/** A valid file, and where its parts are: the server's errors about a plan are shown at the file's line. */
export interface ParsedPlansFile {
  content: PlansFile;
  /** The position of a JSON Pointer into the file, e.g. `/plans/0/devices/0/platform`. */
  positionOf(pointer: string): Position;
}

/** The schema compiled at `npm run openapi` with scripts/testbay-yaml/validator-code.ts's options (all errors, verbose). */
const validate = (): ValidateFunction => compiledValidator as unknown as ValidateFunction;

/** "Map keys must be unique at line 3, column 1:\n\n<excerpt>" → "Map keys must be unique". */
function yamlMessage(message: string): string {
  return (message.split("\n")[0] ?? message).replace(/ at line \d+, column \d+:?$/, "");
}

/** Plans with the same name: the second and later ones are the mistake, pointing back at the first. */
function duplicateNames(document: Document, lines: LineCounter, data: unknown): FileIssue[] {
  const plans = (data as { plans?: unknown } | null)?.plans;
  if (!Array.isArray(plans)) return [];
  const first = new Map<string, number>();
  const issues: FileIssue[] = [];
  plans.forEach((plan, i) => {
    const name = (plan as { name?: unknown } | null)?.name;
    if (typeof name !== "string") return;
    const earlier = first.get(name);
    if (earlier === undefined) {
      first.set(name, i);
      return;
    }
    const segments = ["plans", String(i), "name"];
    const line = locate(document, lines, ["plans", String(earlier), "name"]).line;
    issues.push({
      ...locate(document, lines, segments),
      path: displayPath(segments),
      message: `"${name}" is the name of plans[${earlier}] (line ${line}) too: plans are matched by name, so names must be unique in the file`,
    });
  });
  return issues;
}

/**
 * Reads testbay.yaml: YAML syntax, then the schema, then unique names. Throws PlansFileError listing every
 * problem with its line and column; nothing has been sent to the server then.
 */
export function parsePlansFile(text: string, fileName: string): ParsedPlansFile {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: true });
  if (document.errors.length > 0) {
    throw new PlansFileError(
      fileName,
      document.errors.map((error) => {
        const position = error.linePos?.[0] ?? lines.linePos(error.pos[0]);
        return {
          line: position.line,
          col: position.col,
          path: "",
          message: `invalid YAML: ${yamlMessage(error.message)}`,
        };
      }),
    );
  }
  const data: unknown = document.toJS();
  const check = validate();
  const issues: FileIssue[] = [];
  if (!check(data)) {
    for (const issue of schemaIssues(check.errors ?? [], testbayYamlSchema)) {
      const segments = pointerSegments(issue.pointer);
      issues.push({
        ...locate(document, lines, segments, { key: issue.atKey === true }),
        path: displayPath(segments) || "the file",
        message: issue.message,
      });
    }
  }
  issues.push(...duplicateNames(document, lines, data));
  if (issues.length > 0) {
    issues.sort((a, b) => a.line - b.line || a.col - b.col);
    throw new PlansFileError(fileName, issues);
  }
  return {
    content: data as PlansFile,
    positionOf: (pointer) => locate(document, lines, pointerSegments(pointer)),
  };
}
