import { ApiError } from "../../errors.ts";

/** What `/` says on a server whose checkout has not built the dashboard (an `npm install --ignore-scripts`). */
export function dashboardNotBuilt(dir: string): ApiError {
  return new ApiError("route_not_found", {
    reason: "dashboard_not_built",
    detail: `The dashboard has not been built on this server (looked for ${dir}/index.html).`,
    fix: "On the server, run npm run build in the Testbay checkout (npm install and npm ci run it too), then reload.",
  });
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"]/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[char] ?? char,
  );

/** The same, as a page a browser shows. */
export function notBuiltPage(error: ApiError): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Testbay: dashboard not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>The dashboard is not built</h1>
<p>${escapeHtml(error.detail)}</p>
<p>${escapeHtml(error.fix)}</p>
<p>The API answers meanwhile: <a href="/docs">the API reference</a>.</p>
</body></html>
`;
}
