import { writeFile } from "node:fs/promises";
import { Document } from "yaml";
import { ExitCode, UsageError } from "../cli/exit-codes.ts";
import type { TestPlan } from "../sdk/models.ts";
import { pointerSegments } from "./locate.ts";
import type { PlansFile } from "./plans-file.ts";
import { appPlans, type PlansOutcome, type PlansSession } from "./session.ts";
import { testbayYamlSchema } from "./testbay-yaml.schema.generated.ts";

type SchemaObject = Record<string, unknown>;

export interface ExportOptions {
  app: string;
  file?: string;
  force?: boolean;
}

function resolveRef(schema: SchemaObject | undefined): SchemaObject | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== "string") return schema;
  let node: unknown = testbayYamlSchema;
  for (const segment of pointerSegments(ref.replace(/^#/, ""))) node = (node as SchemaObject)?.[segment];
  return resolveRef(node as SchemaObject | undefined);
}

/** A step's own schema: the oneOf branch whose `type` is the step's. */
function branchFor(schema: SchemaObject, value: SchemaObject): SchemaObject {
  const branches = ((schema.oneOf as SchemaObject[] | undefined) ?? []).map(resolveRef);
  const match = branches.find((b) => {
    const type = (b?.properties as SchemaObject | undefined)?.type as SchemaObject | undefined;
    return (type?.enum as unknown[] | undefined)?.includes(value.type) || type?.const === value.type;
  });
  return match ?? schema;
}

/**
 * Keys in the order the schema lists them (name first, type first), others after in alphabetical order: the
 * same plans always give the same file, so an exported file diffs cleanly in review.
 */
function ordered(value: unknown, schema: SchemaObject | undefined): unknown {
  const own = resolveRef(schema);
  if (Array.isArray(value)) return value.map((item) => ordered(item, own?.items as SchemaObject | undefined));
  if (value === null || typeof value !== "object") return value;
  const object = value as SchemaObject;
  const shape = own?.oneOf ? branchFor(own, object) : own;
  const properties = (shape?.properties as SchemaObject | undefined) ?? {};
  const known = Object.keys(properties).filter((key) => key in object);
  const rest = Object.keys(object)
    .filter((key) => !(key in properties))
    .sort();
  return Object.fromEntries(
    [...known, ...rest].map((key) => [
      key,
      ordered(
        object[key],
        (properties[key] as SchemaObject | undefined) ?? (shape?.additionalProperties as SchemaObject),
      ),
    ]),
  );
}

/** The app's plans as testbay.yaml, defaults written out, with the comment that gives editors the schema. */
export function plansFileText(app: string, plans: TestPlan[], schemaUrl: string): string {
  const content: PlansFile = {
    app,
    plans: plans.map((p) => ({
      name: p.name,
      devices: p.devices,
      steps: p.steps,
      timeout_seconds: p.timeout_seconds,
      max_attempts: p.max_attempts,
    })),
  };
  const document = new Document(ordered(content, testbayYamlSchema));
  document.commentBefore = ` yaml-language-server: $schema=${schemaUrl}`;
  return document.toString({ lineWidth: 0 });
}

/** The server's origin from the API base URL: http://host:8080/v1 → http://host:8080 (a path prefix kept). */
function schemaUrlOf(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}/downloads/testbay.schema.json`;
}

/** `testbay plans export --app PKG [-f FILE] [--force]`: the app's active plans, in the file apply reads. */
export async function exportPlans(
  session: PlansSession,
  options: ExportOptions,
): Promise<PlansOutcome & { text?: string }> {
  const target = options.file ? session.resolvePath(options.file) : undefined;
  const testbay = session.testbay();
  const plans = (await appPlans(session, options.app, "active")).sort(
    (a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id),
  );
  if (plans.length === 0) {
    await testbay.apps.get(options.app); // no such app: its 404 and fix
    throw new UsageError(
      `${options.app} has no active test plans: nothing to export. Write testbay.yaml by hand (see docs/ci.md) and apply it.`,
    );
  }
  const byName = new Map<string, string[]>();
  for (const p of plans) byName.set(p.name, [...(byName.get(p.name) ?? []), p.id]);
  const twice = [...byName].filter(([, ids]) => ids.length > 1);
  if (twice.length > 0) {
    throw new UsageError(
      `plans are matched by name, but ${options.app} has active plans that share one: ${twice
        .map(([name, ids]) => `"${name}" (${ids.join(", ")})`)
        .join("; ")}. Rename or delete all but one of each, then export again.`,
    );
  }
  const text = plansFileText(options.app, plans, schemaUrlOf(testbay.transport.baseUrl));
  if (target) {
    try {
      // "wx": refuse to replace a file someone keeps in their repository, unless told to.
      await writeFile(target, text, { flag: options.force ? "w" : "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") {
        throw new UsageError(`-f ${options.file}: the file exists (${target}); add --force to overwrite it.`);
      }
      throw error;
    }
    session.say(
      `Wrote ${plans.length} test plan${plans.length === 1 ? "" : "s"} of ${options.app} to ${target}.`,
    );
  }
  return {
    code: ExitCode.ok,
    json: { app: options.app, file: target ?? null, plans: plans.map((p) => ({ name: p.name, id: p.id })) },
    ...(target ? {} : { text }),
  };
}
