import { readFileSync } from "node:fs";

// Three directories up is packages/server/ from both src/features/downloads/ and dist/features/downloads/.
const packageJson = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

/** The server's version (packages/server/package.json): the CLI and agent it serves are of the same one. */
export const serverVersion: string = packageJson.version;
