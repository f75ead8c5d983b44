import { type ConversionContext, listOf } from "./conversion-context.ts";
import type { FlankFilter } from "./flank-plan.ts";

/** `am instrument -e` filter keys a Flank test target may start with, and the plan filter each becomes. */
const filterKeys: Record<string, keyof FlankFilter> = {
  class: "classes",
  notClass: "not_classes",
  package: "packages",
  notPackage: "not_packages",
  annotation: "annotations",
  notAnnotation: "not_annotations",
  size: "size",
};

const testName = /^[A-Za-z0-9_.$#]+$/;

/**
 * `gcloud.test-targets` (`class a.B#m`, `package a`, `notAnnotation a.C`, `size large`, several values joined
 * by commas as am instrument takes them) → the step's filter. testFile/notTestFile are refused: Testbay writes
 * -e testFile itself to give each shard its exact list.
 */
export function filterOf(context: ConversionContext): FlankFilter | undefined {
  const targets = context.gcloud("test-targets");
  if (!targets) return undefined;
  const filter: FlankFilter = {};
  // As Flank's parseEnvsIfNeeded (ArgsHelper.kt): a target `$NAME` is the environment variable's value, a
  // comma-separated list of targets; Flank drops one that is not set, said here in a warning.
  const written = listOf(targets.value, { commas: false });
  const expanded: [unknown, number][] = [];
  written.forEach((target, i) => {
    if (typeof target !== "string" || !target.startsWith("$")) {
      expanded.push([target, i]);
      return;
    }
    const name = target.slice(1).trim();
    const value = context.env[name];
    if (value === undefined) {
      context.warn(
        targets,
        `gcloud.test-targets[${i}] ${target}: ${name} is not set, so it adds no targets (as in Flank)`,
        [String(i)],
      );
      return;
    }
    for (const part of value.split(",")) if (part.trim()) expanded.push([part.trim(), i]);
  });
  expanded.forEach(([target, i]) => {
    const at = [String(i)];
    const match = typeof target === "string" ? /^\s*(\S+)\s+(.+?)\s*$/.exec(target) : null;
    if (!match) {
      context.error(
        targets,
        `gcloud.test-targets[${i}] ${JSON.stringify(target)} is not "KEY VALUE" (class a.B#m, package a, annotation a.C, size large)`,
        at,
      );
      return;
    }
    const [, key = "", rest = ""] = match;
    const field = filterKeys[key];
    if (!field) {
      const why =
        key === "testFile" || key === "notTestFile"
          ? "Testbay writes -e testFile itself to give each shard its list: name the tests with class a.B#m"
          : `the keys are ${Object.keys(filterKeys).join(", ")}`;
      context.error(targets, `gcloud.test-targets[${i}] starts with ${key}: ${why}`, at);
      return;
    }
    const values = rest
      .split(",")
      .map((value) => value.trim())
      .filter(Boolean);
    if (field === "size") {
      const size = values[0];
      if (values.length !== 1 || (size !== "small" && size !== "medium" && size !== "large")) {
        context.error(targets, `gcloud.test-targets[${i}]: size takes one of small, medium, large`, at);
      } else if (filter.size && filter.size !== size) {
        context.error(
          targets,
          `gcloud.test-targets[${i}]: a second size (${filter.size} already): one size only`,
          at,
        );
      } else filter.size = size;
      return;
    }
    const bad = values.find((value) => !testName.test(value));
    if (bad !== undefined) {
      context.error(
        targets,
        `gcloud.test-targets[${i}]: ${JSON.stringify(bad)} is not a class, package or annotation name`,
        at,
      );
      return;
    }
    const list = (filter[field] as string[] | undefined) ?? [];
    for (const value of values) if (!list.includes(value)) list.push(value);
    (filter as Record<string, string[]>)[field] = list;
  });
  return Object.keys(filter).length > 0 ? filter : undefined;
}

/**
 * `flank.test-targets-always-run` (`class a.B#m`, as Flank writes them) → `always_run` (`a.B#m`): run first on
 * every shard, outside the sharding.
 */
export function alwaysRunOf(context: ConversionContext): string[] | undefined {
  const always = context.flank("test-targets-always-run");
  if (!always) return undefined;
  const tests: string[] = [];
  listOf(always.value, { commas: false }).forEach((target, i) => {
    const match =
      typeof target === "string"
        ? /^\s*(?:class\s+)?([A-Za-z0-9_.$]+(?:#[A-Za-z0-9_$]+)?)\s*$/.exec(target)
        : null;
    if (!match?.[1]) {
      context.error(
        always,
        `flank.test-targets-always-run[${i}] ${JSON.stringify(target)} is not "class a.B" or "class a.B#method"`,
        [String(i)],
      );
      return;
    }
    tests.push(match[1]);
  });
  return tests.length > 0 ? tests : undefined;
}
