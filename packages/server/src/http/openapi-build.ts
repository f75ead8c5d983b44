import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildApp } from "../app.ts";
import { loadConfig } from "../config.ts";

/**
 * The OpenAPI document as the server generates it, from a throwaway server on an empty SQLite data dir:
 * nothing about it depends on a configuration or on data, so it is the same wherever it is built.
 */
export async function buildOpenApiDocument(): Promise<unknown> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "testbay-openapi-"));
  try {
    const app = await buildApp({
      config: loadConfig({
        TESTBAY_DATA_DIR: dataDir,
        TESTBAY_LOCAL_AGENT: "false",
        TESTBAY_LOG_LEVEL: "silent",
      }),
    });
    try {
      await app.ready();
      // A copy: the server's own document object is cached and served as it is.
      return structuredClone(app.swagger());
    } finally {
      await app.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The committed form of the document: stable key order (as generated), two-space indent, final newline. */
export function openApiText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
