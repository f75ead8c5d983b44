import { formatBytes } from "../../format/bytes.ts";
import { baseName } from "./artifact-kind.ts";
import { ArtifactRow } from "./artifact-row.tsx";
import type { FileFolder } from "./device-files.ts";
import { Disclosure } from "./lazy-disclosure.tsx";

/** Folders holding more files than this start closed: an Allure results folder can hold thousands. */
export const openUpTo = 40;

export const filesAndSize = (count: number, bytes: number) =>
  `${count} ${count === 1 ? "file" : "files"} · ${formatBytes(bytes)}`;

/**
 * A folder's contents as a file manager lists them: its folders (each a disclosure with its file count and size,
 * open unless it holds many), then its files, each with its size, a preview when the browser can show it and a
 * download link.
 */
export function FileTree({ runId, folder }: { runId: string; folder: FileFolder }) {
  return (
    <ul className="divide-y divide-line">
      {folder.folders.map((child) => (
        <li key={child.path} className="py-1">
          <Disclosure
            startsOpen={child.fileCount <= openUpTo}
            summary={
              <summary className="cursor-pointer py-1 text-sm">
                <span className="font-mono text-xs break-all">{child.label}/</span>{" "}
                <span className="text-xs text-muted">({filesAndSize(child.fileCount, child.bytes)})</span>
              </summary>
            }
          >
            {() => (
              <div className="ml-1 border-l border-line pl-2 sm:pl-3">
                <FileTree runId={runId} folder={child} />
              </div>
            )}
          </Disclosure>
        </li>
      ))}
      {folder.files.map((file) => (
        <ArtifactRow
          key={file.artifact.name}
          runId={runId}
          artifact={file.artifact}
          label={baseName(file.path)}
          facts={formatBytes(file.artifact.size_bytes)}
        />
      ))}
    </ul>
  );
}
