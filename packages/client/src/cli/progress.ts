import cliProgress from "cli-progress";
import type { UploadProgress } from "../sdk/upload.ts";

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface UploadProgressView {
  /** A bar is drawn (on a terminal, outside CI). */
  isBar: boolean;
  update(progress: UploadProgress): void;
  stop(): void;
}

/** A progress bar only where a person watches: a terminal, and never in CI logs (CI=true). */
export function wantsProgressBar(stream: ProgressStream, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && env.CI !== "true" && env.CI !== "1";
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** The upload's progress bar on a TTY; elsewhere nothing (start and end are reported as lines). */
export function uploadProgress(
  stream: ProgressStream,
  env: Record<string, string | undefined>,
  label: string,
): UploadProgressView {
  if (!wantsProgressBar(stream, env)) return { isBar: false, update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    {
      stream: stream as NodeJS.WritableStream,
      format: `${label} [{bar}] {percentage}% {sentMiB}/{totalMiB} MiB, {eta_formatted} left`,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    isBar: true,
    update({ sentBytes, totalBytes }) {
      if (!started) {
        bar.start(totalBytes, 0, { sentMiB: mib(0), totalMiB: mib(totalBytes) });
        started = true;
      }
      bar.update(sentBytes, { sentMiB: mib(sentBytes), totalMiB: mib(totalBytes) });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
