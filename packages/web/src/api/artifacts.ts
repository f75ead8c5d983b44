import { queryOptions } from "@tanstack/react-query";
import type { components } from "../../../client/src/sdk/api.generated.ts";
import { api } from "./client.ts";
import { pollUnlessLive } from "./live-updates.ts";
import { ApiProblem, unwrap } from "./problem.ts";
import type { Problem } from "./types.ts";

/** One stored file of a device run's attempt (GET /v1/executions/{id}/artifacts). */
export type Artifact = components["schemas"]["Artifact"];

/** Text shown inline is capped: a 40 MB logcat would stall the page; the download has all of it. */
export const textPreviewBytes = 256 * 1024;

/**
 * Where the browser gets an artifact of one device run's attempt (a device entry's shard: two shards may run on
 * the same device one after the other, under the same names). The name's folders stay path segments
 * ("device-emulator-5554/screenshots/x.png"), each encoded; the session cookie authenticates a plain URL, so it
 * serves <img>, <video> and download links alike.
 */
export function artifactUrl(
  runId: string,
  name: string,
  run: { device: number; shard: number; attempt: number },
): string {
  const path = name.split("/").map(encodeURIComponent).join("/");
  const { device, shard, attempt } = run;
  return `/v1/executions/${encodeURIComponent(runId)}/artifacts/${path}?device=${device}&shard=${shard}&attempt=${attempt}`;
}

/**
 * The run's artifacts, every device run and attempt, for the Artifacts section and beside the failures. While the
 * run can change it is read again on each live update (its key is under the run's), polled only while the event
 * stream is down.
 */
export const artifactsQuery = (id: string, live: boolean) =>
  queryOptions({
    queryKey: ["execution", id, "artifacts"],
    queryFn: async () =>
      unwrap(await api.GET("/v1/executions/{id}/artifacts", { params: { path: { id } } })).items,
    refetchInterval: live ? pollUnlessLive : false,
  });

export interface TextPreview {
  text: string;
  /** The artifact's whole size in bytes; more than was read when `truncated`. */
  size: number;
  truncated: boolean;
}

/**
 * The first 256 KiB of a text artifact (one Range request), decoded as UTF-8; a character cut at the end shows as
 * U+FFFD. An artifact never changes once stored, so it is read once.
 */
export const artifactTextQuery = (url: string) =>
  queryOptions({
    queryKey: ["artifact-text", url],
    queryFn: async (): Promise<TextPreview> => {
      const response = await fetch(url, {
        credentials: "same-origin",
        headers: { range: `bytes=0-${textPreviewBytes - 1}` },
      });
      if (!response.ok) {
        const problem = (await response.json().catch(() => ({}))) as Partial<Problem>;
        throw new ApiProblem(response.status, problem);
      }
      const bytes = await response.arrayBuffer();
      // 206: "bytes 0-262143/1048576"; 200: the whole file (small enough, or a server that ignores Range).
      const total = Number(response.headers.get("content-range")?.split("/")[1] ?? bytes.byteLength);
      return {
        text: new TextDecoder().decode(bytes),
        size: Number.isFinite(total) ? total : bytes.byteLength,
        truncated: total > bytes.byteLength,
      };
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
