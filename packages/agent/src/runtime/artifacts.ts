import { readdir } from "node:fs/promises";
import path from "node:path";

/** What the server accepts as an artifact name (relative path of plain segments). */
const artifactName = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}(?:\/[A-Za-z0-9_][A-Za-z0-9._-]{0,127}){0,7}$/;

const contentTypes: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".txt": "text/plain",
  ".log": "text/plain",
  ".xml": "application/xml",
  ".json": "application/json",
  // A session's commands.jsonl (API.md §12): JSON lines, shown as text by the dashboard.
  ".jsonl": "application/x-ndjson",
  ".html": "text/html",
  ".zip": "application/zip",
};

export interface ArtifactFile {
  name: string;
  file: string;
  contentType: string;
}

/**
 * The files a job left in its artifacts directory, named by their path inside it. Files whose names the
 * server would refuse are returned apart, so the job can say which ones were not kept and why.
 */
export async function collectArtifacts(dir: string): Promise<{ files: ArtifactFile[]; refused: string[] }> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const files: ArtifactFile[] = [];
  const refused: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const name = path.relative(dir, file).split(path.sep).join("/");
    if (!artifactName.test(name)) {
      refused.push(name);
      continue;
    }
    const contentType = contentTypes[path.extname(name).toLowerCase()] ?? "application/octet-stream";
    files.push({ name, file, contentType });
  }
  files.sort((a, b) => a.name.localeCompare(b.name));
  return { files, refused };
}
