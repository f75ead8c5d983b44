// The dashboard's tests open the built dashboard, as the server serves it (packages/web/dist): the same files a
// user gets. CI runs `npm run build` before `npm test`; locally, a missing build fails here with what to do.
import { existsSync } from "node:fs";
import { defaultWebDir } from "../../server/src/features/web/index.ts";

export function requireWebBuild(): void {
  if (!existsSync(`${defaultWebDir}/index.html`)) {
    throw new Error(
      `The dashboard is not built (no ${defaultWebDir}index.html): run npm run build (or npm run build:web) first.`,
    );
  }
}
