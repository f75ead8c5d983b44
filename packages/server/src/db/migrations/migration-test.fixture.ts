// Shared by the migrations' own tests (*.int.test.ts beside them): a fresh database of the project's kind taken
// to just before the migration under test, moved over it up and down, and the rows those tests store before it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Kysely, Migrator } from "kysely";
import { createTestDatabase } from "../../../test/harness.ts";
import type { Dialect } from "../kysely.ts";
import { openDatabase } from "../kysely.ts";
import { migrations } from "./index.ts";

export interface MigrationUnderTest {
  /** The tables as the migrations so far left them: untyped on purpose, they are not today's schema. */
  db: Kysely<any>;
  dialect: Dialect;
  /** Applies the migration (and any before it not applied yet); throws what it threw. */
  up(): Promise<void>;
  /** Undoes it, back to the migration before it; throws what its down threw (a refusal, for some). */
  down(): Promise<void>;
  close(): Promise<void>;
}

/** A database of its own for one test file, migrated to the migration just before `name`. */
export async function migrationUnderTest(name: string): Promise<MigrationUnderTest> {
  const names = Object.keys(migrations);
  const at = names.indexOf(name);
  if (at < 1) throw new Error(`${name} is not a migration with one before it (db/migrations/index.ts)`);
  const before = names[at - 1] as string;

  const dir = await mkdtemp(path.join(tmpdir(), `testbay-${name}-`));
  const database = await createTestDatabase(dir);
  const handle = openDatabase(database.url);
  const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } });
  const migrateTo = async (target: string) => {
    const { error } = await migrator.migrateTo(target);
    if (error) throw error;
  };
  await migrateTo(before);
  return {
    db: handle.db,
    dialect: handle.dialect,
    up: () => migrateTo(name),
    down: () => migrateTo(before),
    close: async () => {
      await handle.close();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** When the rows below were made. */
export const storedAt = "2026-01-01T00:00:00.000Z";

/**
 * An organization with an app, com.example.basic, and its version 1.0 (`app_1`, `ver_1`): what the stored
 * executions refer to. Only columns that every migration since 0004 has.
 */
export async function storeOrganizationWithVersion(db: Kysely<any>, organizationId: string): Promise<void> {
  await db
    .insertInto("organizations")
    .values({ id: organizationId, name: "acme", created_at: storedAt })
    .execute();
  await db
    .insertInto("apps")
    .values({
      id: "app_1",
      organization_id: organizationId,
      package_name: "com.example.basic",
      package_name_folded: "com.example.basic",
      platform: "android",
      created_at: storedAt,
    })
    .execute();
  await db
    .insertInto("app_versions")
    .values({
      id: "ver_1",
      app_id: "app_1",
      version: "1.0",
      size_bytes: 1,
      sha256: "00",
      blob_key: "blob",
      binary: "{}",
      created_at: storedAt,
    })
    .execute();
}

/** An execution of version 1.0 of plan tp_1 as migration 0004 made them (every column of it), with `overrides`. */
export const storedExecution = (
  id: string,
  organizationId: string,
  overrides: Record<string, unknown> = {},
) => ({
  id,
  organization_id: organizationId,
  test_plan_id: "tp_1",
  app_version_id: "ver_1",
  package_name: "com.example.basic",
  version: "1.0",
  status: "passed",
  plan: "{}",
  env: "{}",
  summary: "{}",
  cancel_requested: 0,
  triggered_by: "cl_1",
  created_at: storedAt,
  started_at: null,
  finished_at: null,
  ...overrides,
});

/** A finished device run of an execution, with migration 0004's columns. */
export const storedDeviceRun = (id: string, executionId: string) => ({
  id,
  execution_id: executionId,
  position: 0,
  status: "passed",
  attempt: 1,
  created_at: storedAt,
});
