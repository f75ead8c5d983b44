/**
 * A job's version files (API.md §14: additional_apks, push): each downloaded once per host, by its sha256,
 * into the same cache as the binary (binary-cache.ts checks what arrived), from
 * `GET /agent/jobs/{lease}/files/{name}` with the agent's token while the lease is held (the job's
 * version_files[].url says the same; the path is built here so a server without TESTBAY_PUBLIC_URL works).
 */
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { AgentJob, Testbay } from "@testbay/client";
import type { BinaryCache } from "./binary-cache.ts";

export type VersionFile = AgentJob["version_files"][number];

/** `versionFilePath` of a step's context: each name fetched at most once per job. */
export function versionFileGetter(
  job: Pick<AgentJob, "lease_id" | "version_files">,
  client: Pick<Testbay, "transport">,
  cache: BinaryCache,
): (name: string) => Promise<string> {
  const fetched = new Map<string, Promise<string>>();
  return (name) => {
    const file = (job.version_files ?? []).find((f) => f.name === name);
    if (!file) {
      return Promise.reject(
        new Error(
          `the version has no file named ${name}: upload it with testbay upload --extra-file ${name}=PATH`,
        ),
      );
    }
    let path = fetched.get(name);
    if (path === undefined) {
      path = cache.get(file.sha256, async (destination) => {
        const response = await client.transport.send({
          method: "GET",
          path: `/agent/jobs/${encodeURIComponent(job.lease_id)}/files/${encodeURIComponent(name)}`,
          headers: { accept: "application/octet-stream" },
          safeToResend: true,
        });
        const body = response.body
          ? Readable.fromWeb(response.body as WebReadableStream<Uint8Array>)
          : Readable.from([]);
        await pipeline(body, createWriteStream(destination));
      });
      fetched.set(name, path);
    }
    return path;
  };
}
