import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync } from "fastify";
import { ApiError } from "../../errors.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { sendStoredFile } from "../../http/send-stored-file.ts";
import { serverVersion } from "./server-version.ts";

/** Where `npm run build` (scripts/build.ts) leaves the files: packages/server/dist/downloads/, from src or dist. */
export const defaultDownloadsDir = fileURLToPath(new URL("../../../dist/downloads/", import.meta.url));

export interface Download {
  file: string;
  contentType: string;
  summary: string;
}

export const downloads: readonly Download[] = [
  {
    file: "testbay.mjs",
    contentType: "text/javascript",
    summary: "The testbay CLI as one file: `node testbay.mjs …` needs Node 20 and nothing else",
  },
  {
    file: "testbay-cli.tgz",
    contentType: "application/gzip",
    summary: "The testbay CLI and SDK (@testbay/client), compiled, for `npm install -g URL`",
  },
  {
    file: "testbay-agent.tgz",
    contentType: "application/gzip",
    summary: "testbay-agent (@testbay/agent) with the client inside it, compiled, for `npm install -g URL`",
  },
  {
    file: "testbay.schema.json",
    contentType: "application/schema+json",
    summary:
      "The JSON Schema of testbay.yaml (`testbay plans apply`), for editors: `# yaml-language-server: $schema=URL`",
  },
];

interface Fingerprint {
  size: number;
  mtimeMs: number;
  sha256: string;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * The CLI and agent of this server's version, as files made at build time (API.md §11): unauthenticated, since
 * a pipeline fetches its CLI before it has credentials, and not rate limited, like the health probes.
 */
export const downloadsRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, options) => {
  const dir = options.dir ?? defaultDownloadsDir;
  // A rebuild replaces a file under a running server: the ETag follows what is on disk now.
  const fingerprints = new Map<string, Fingerprint>();

  for (const download of downloads) {
    const path = `${dir.replace(/\/$/, "")}/${download.file}`;
    app.get(
      `/downloads/${download.file}`,
      {
        config: { auth: "public", rateLimit: "skip" },
        schema: {
          summary: download.summary,
          description: `Version ${serverVersion}, the server's own (also in GET /healthz). Supports a single Range; ETag is the SHA-256.`,
          tags: ["downloads"],
          security: [],
          response: { ...ProblemResponses },
        },
      },
      async (request, reply) => {
        const found = await stat(path).catch(() => undefined);
        if (!found?.isFile()) {
          throw new ApiError("route_not_found", {
            reason: "download_not_built",
            detail: `${download.file} has not been built on this server (looked for ${path}).`,
            fix: "On the server, run npm run build in the Testbay checkout (npm install and npm ci run it too), then download again.",
          });
        }
        let known = fingerprints.get(path);
        if (!known || known.size !== found.size || known.mtimeMs !== found.mtimeMs) {
          known = { size: found.size, mtimeMs: found.mtimeMs, sha256: await sha256Of(path) };
          fingerprints.set(path, known);
        }
        return sendStoredFile(request, reply, {
          size: known.size,
          sha256: known.sha256,
          contentType: download.contentType,
          fileName: download.file,
          what: download.file,
          // Small reads: the files are read whole for every download, and a fleet of pipelines fetches them at once.
          open: async (range) =>
            createReadStream(path, {
              highWaterMark: 16 * 1024,
              ...(range ? { start: range.start, end: range.end } : {}),
            }),
        });
      },
    );
  }
};
