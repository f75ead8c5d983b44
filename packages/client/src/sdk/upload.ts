import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { TestbayApiError } from "./errors.ts";
import type { AppVersion } from "./models.ts";
import { segment, type Transport } from "./transport.ts";

export interface UploadProgress {
  /** Bytes sent in the current attempt (a retry starts again from 0). */
  sentBytes: number;
  totalBytes: number;
  attempt: number;
}

export interface UploadOptions {
  packageName: string;
  version: string;
  /** Path of the binary on disk: APK, AAB, IPA or zipped .app. */
  file: string;
  onProgress?: (progress: UploadProgress) => void;
  /** HEAD the version first and skip the transfer when it is registered (default true). */
  skipIfRegistered?: boolean;
  deadlineAt?: number;
  signal?: AbortSignal;
}

/**
 * `uploaded`: this call registered the version. `skipped`: it was registered already, nothing was sent.
 * `already_landed`: the server said 409 but holds exactly this file (sha256 equal): an earlier attempt of this
 * upload, retried after a 502 or a dropped connection, had landed (rule 9).
 */
export type UploadOutcome = "uploaded" | "skipped" | "already_landed";

export interface UploadResult {
  outcome: UploadOutcome;
  /** The registered version; undefined when skipped (the HEAD that found it has no body). */
  version: AppVersion | undefined;
  sizeBytes: number;
}

/** Hex SHA-256 of a file, read as a stream. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function* readWithProgress(file: string, report: (sent: number) => void): AsyncIterable<Uint8Array> {
  let sent = 0;
  report(0);
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
    yield chunk as Buffer;
    sent += (chunk as Buffer).length;
    report(sent);
  }
}

/** The version turned out to be registered between two attempts of an upload. */
class RegisteredMeanwhile extends Error {
  override name = "RegisteredMeanwhile";
}

/**
 * Uploads a version's binary (API.md §4), streaming it from disk: HEAD first and no transfer when the
 * version is registered; the PUT is retried after 502/503/504/429 or a dropped connection (PUT is
 * idempotent: a version is registered once); a 409 then is judged by the registered version's sha256.
 */
export async function uploadVersion(
  transport: Transport,
  getVersion: (packageName: string, version: string) => Promise<AppVersion>,
  options: UploadOptions,
): Promise<UploadResult> {
  const { packageName, version, file } = options;
  const path = `/apps/${segment(packageName)}/versions/${segment(version)}`;
  const { size } = await stat(file);
  const common = { deadlineAt: options.deadlineAt, signal: options.signal };

  if (options.skipIfRegistered !== false) {
    try {
      await transport.send({ method: "HEAD", path, ...common });
      return { outcome: "skipped", version: undefined, sizeBytes: size };
    } catch (error) {
      if (!(error instanceof TestbayApiError && error.status === 404)) throw error;
    }
  }

  let attempt = -1;
  try {
    const response = await transport.json<AppVersion>({
      method: "PUT",
      path,
      ...common,
      // Before sending the file again, ask whether the previous attempt landed after all. Without this, a
      // resend would meet the server's early 409, which a client still streaming its body may never read
      // (the server closes with the body unread and the connection is reset).
      beforeResend: async () => {
        try {
          await getVersion(packageName, version);
        } catch (error) {
          if (error instanceof TestbayApiError && error.status === 404) return;
          throw error;
        }
        throw new RegisteredMeanwhile();
      },
      body: () => {
        attempt += 1;
        const current = attempt;
        return {
          body: readWithProgress(file, (sentBytes) =>
            options.onProgress?.({ sentBytes, totalBytes: size, attempt: current }),
          ),
          headers: { "content-type": "application/octet-stream", "content-length": String(size) },
        };
      },
    });
    return { outcome: "uploaded", version: response.body, sizeBytes: size };
  } catch (error) {
    const registeredMeanwhile =
      error instanceof RegisteredMeanwhile ||
      (error instanceof TestbayApiError && error.code === "app_version_exists");
    if (!registeredMeanwhile) throw error;
    // Registered meanwhile: by an earlier attempt of ours that landed, or by someone else. Equal bytes are
    // the same upload; other bytes under the same version are an error worth a clear message.
    const [registered, local] = await Promise.all([getVersion(packageName, version), sha256File(file)]);
    if (registered.sha256 === local)
      return { outcome: "already_landed", version: registered, sizeBytes: size };
    throw new TestbayApiError({
      status: 409,
      method: "PUT",
      path,
      problem: {
        ...(error instanceof TestbayApiError ? error.problem : {}),
        code: "app_version_exists",
        reason: "different_binary",
        detail: `${packageName} ${version} is registered with another binary (sha256 ${registered.sha256}, ${registered.size_bytes} bytes) than ${file} (sha256 ${local}, ${size} bytes).`,
        fix: "A version is immutable: upload this build under a new version identifier, or trigger the registered one.",
      },
    });
  }
}
