import { readFile } from "node:fs/promises";
import { ExitCode, UsageError } from "../cli/exit-codes.ts";
import { TestbayApiError } from "../sdk/errors.ts";
import type { TestPlan } from "../sdk/models.ts";
import { displayPath } from "./locate.ts";
import { formatIssue, type ParsedPlansFile, PlansFileError, parsePlansFile } from "./parse.ts";
import { type PlanContent, type PlanField, withDefaults } from "./plans-file.ts";
import { type NameConflict, type PlanAction, reconcile } from "./reconcile.ts";
import { appPlans, type PlansOutcome, type PlansSession } from "./session.ts";

export interface ApplyOptions {
  file: string;
  prune?: boolean;
  dryRun?: boolean;
}

const done = {
  create: "created",
  update: "updated",
  unchanged: "unchanged",
  restore: "restored",
  archive: "archived",
} as const;

type Done = (typeof done)[keyof typeof done];

interface Result {
  name: string;
  id: string | null;
  action: Done;
  changed?: PlanField[];
}

async function readPlansFile(session: PlansSession, file: string): Promise<string> {
  try {
    return await readFile(session.resolvePath(file), "utf8");
  } catch {
    throw new UsageError(`-f ${file}: no such file (looked for ${session.resolvePath(file)}).`);
  }
}

function patchOf(content: PlanContent, fields: PlanField[]): Partial<PlanContent> {
  return Object.fromEntries(fields.map((field) => [field, content[field]]));
}

/** The server's 400 about a plan's body (`errors: [{path: "/devices/0/platform", …}]`), at the file's lines. */
function serverIssues(error: unknown, parsed: ParsedPlansFile, fileName: string, index: number): string[] {
  if (!(error instanceof TestbayApiError) || error.status !== 400) return [];
  const errors = Array.isArray(error.problem.errors) ? error.problem.errors : [];
  return errors.flatMap((e: { path?: unknown; message?: unknown }) => {
    if (typeof e.path !== "string" || typeof e.message !== "string") return [];
    const pointer = `/plans/${index}${e.path}`;
    const path = displayPath(pointer.slice(1).split("/"));
    return [formatIssue(fileName, { ...parsed.positionOf(pointer), path, message: e.message })];
  });
}

function conflictLine(fileName: string, parsed: ParsedPlansFile, conflict: NameConflict): string {
  const pointer = `/plans/${conflict.index}/name`;
  return formatIssue(fileName, {
    ...parsed.positionOf(pointer),
    path: `plans[${conflict.index}].name`,
    message: `"${conflict.name}" names ${conflict.ids.length} ${conflict.state} plans on the server (${conflict.ids.join(", ")}), so apply cannot tell which one this is. Keep one: rename the others (PATCH /v1/testplans/ID {"name": …}) or delete them (DELETE /v1/testplans/ID), then apply again.`,
  });
}

/** Aligned lines as each plan is done, so a log that stops halfway shows how far apply got. */
function rowWriter(session: PlansSession, actions: PlanAction[], fileName: string, dryRun: boolean) {
  const verb = (kind: PlanAction["kind"]) => (dryRun && kind !== "unchanged" ? `would ${kind}` : done[kind]);
  const verbWidth = Math.max(...actions.map((a) => verb(a.kind).length));
  const nameWidth = Math.max(...actions.map((a) => a.name.length));
  return (action: PlanAction, id: string | null) => {
    let note = "";
    if (action.kind === "update") note = `(${action.changed.join(", ")})`;
    if (action.kind === "restore" && action.changed.length)
      note = `(and updated: ${action.changed.join(", ")})`;
    if (action.kind === "archive") {
      note = `(not in ${fileName}; --prune; restorable with POST /v1/testplans/${action.id}/restore)`;
    }
    const cells = [verb(action.kind).padEnd(verbWidth), action.name.padEnd(nameWidth), id ?? "-", note];
    session.say(cells.join("  ").trimEnd());
  };
}

function summary(app: string, results: Result[], dryRun: boolean): string {
  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.action, (counts.get(r.action) ?? 0) + 1);
  const text = [...counts].map(([action, n]) => `${n} ${action}`).join(", ") || "no plans";
  return dryRun ? `Dry run for ${app}: would be ${text}; nothing was changed.` : `${app}: ${text}.`;
}

/** One plan's writes: a POST, a PATCH, a restore (and PATCH), or an archive. Returns the plan's ID. */
async function perform(session: PlansSession, app: string, action: PlanAction): Promise<string> {
  const plans = session.testbay().testPlans;
  switch (action.kind) {
    case "create": {
      const { name, ...content } = action.entry;
      return (await plans.create({ name, package_name: app, ...withDefaults(content) })).id;
    }
    case "update":
      await plans.patch(action.id, patchOf(withDefaults(action.entry), action.changed));
      return action.id;
    case "restore":
      await plans.restore(action.id);
      if (action.changed.length)
        await plans.patch(action.id, patchOf(withDefaults(action.entry), action.changed));
      return action.id;
    case "archive":
      await plans.archive(action.id);
      return action.id;
    case "unchanged":
      return action.id;
  }
}

/**
 * `testbay plans apply -f testbay.yaml`: the file is checked whole before anything is sent, the server's
 * plans are listed once, and only plans that differ are written, so applying the same file twice writes
 * nothing the second time.
 */
export async function applyPlans(session: PlansSession, options: ApplyOptions): Promise<PlansOutcome> {
  const fileName = options.file;
  let parsed: ParsedPlansFile;
  try {
    parsed = parsePlansFile(await readPlansFile(session, options.file), fileName);
  } catch (error) {
    if (!(error instanceof PlansFileError)) throw error;
    session.say(error.message);
    const n = error.issues.length;
    session.say(`error: ${fileName} has ${n} problem${n === 1 ? "" : "s"}; nothing was sent to the server.`);
    return {
      code: ExitCode.usage,
      json: { error: { type: "invalid_file", file: fileName, issues: error.issues } },
    };
  }
  const { app } = parsed.content;
  session.context = { ...session.context, app };

  const server: TestPlan[] = await appPlans(session, app);
  // No plans at all may mean no such app: ask, so the answer is its 404 and fix rather than a failed create.
  if (server.length === 0) await session.testbay().apps.get(app);

  const { actions, conflicts } = reconcile(parsed.content, server, { prune: options.prune === true });
  if (conflicts.length > 0) {
    // Nothing is applied, not even the plans that could be: the file is meant as a whole, and a pipeline that
    // applies half of it stays red until the names are fixed anyway; better to change nothing until then.
    for (const conflict of conflicts) session.say(conflictLine(fileName, parsed, conflict));
    session.say(`error: plan names on the server are ambiguous for ${app}; nothing was changed.`);
    return {
      code: ExitCode.usage,
      json: {
        error: {
          type: "ambiguous_plan_names",
          app,
          conflicts: conflicts.map(({ name, ids }) => ({ name, ids })),
        },
      },
    };
  }

  const dryRun = options.dryRun === true;
  const row = rowWriter(session, actions, fileName, dryRun);
  const results: Result[] = [];
  for (const action of actions) {
    let id: string | null = action.kind === "create" ? null : action.id;
    if (!dryRun) {
      try {
        id = await perform(session, app, action);
      } catch (error) {
        // The plans before this one are applied (their lines are above); the ones after are not touched.
        if ("index" in action)
          for (const line of serverIssues(error, parsed, fileName, action.index)) session.say(line);
        throw error;
      }
    }
    row(action, id);
    const changed = action.kind === "update" || action.kind === "restore" ? { changed: action.changed } : {};
    results.push({ name: action.name, id, action: done[action.kind], ...changed });
  }
  session.say(summary(app, results, dryRun));
  return { code: ExitCode.ok, json: { app, dry_run: dryRun, plans: results } };
}
