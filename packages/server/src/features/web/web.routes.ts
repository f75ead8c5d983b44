import { stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { isApiPath, wantsHtml } from "./api-paths.ts";
import { dashboardContentSecurityPolicy } from "./content-security-policy.ts";
import { dashboardNotBuilt, notBuiltPage } from "./not-built.ts";

/** Where `npm run build` leaves the dashboard (packages/web/dist), from this file in src/ or in dist/. */
export const defaultWebDir = fileURLToPath(new URL("../../../../web/dist/", import.meta.url));

/** Vite names every file under assets/ by its content's hash: a new build makes new names, so these never change. */
const forGood = "public, max-age=31536000, immutable";

/** index.html and the few unhashed files (theme.js) name the current build: a browser asks again every time. */
const everyTime = "no-cache";

/** Cache-Control is set here, not by the file sender: one place says how long each kind of file lives. */
const ownCacheControl = { cacheControl: false } as const;

/** A file directly in the build's top folder (theme.js, a favicon), never index.html, which has its own route. */
const topLevelFile = /^\/([\w-][\w.-]*)$/;

async function isFile(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined))?.isFile() === true;
}

/**
 * The dashboard (packages/web) at /: its hashed assets cached for good, index.html always revalidated, and the
 * dashboard's own paths (deep links such as /runs/ex_…) answered with index.html, so a reload or a shared link
 * opens the page. The API's paths keep their JSON 404s, and so does anything that does not ask for HTML.
 * Public (the sign-in page must load before anyone has signed in) and out of the OpenAPI document.
 */
export const webRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, options) => {
  const dir = path.resolve(options.dir ?? defaultWebDir);
  const assetsDir = path.join(dir, "assets");

  // A page load fetches a dozen files: assets skip the per-address rate limit, like the API reference's.
  app.addHook("onRoute", (route) => {
    const asset = route.url.startsWith("/assets/");
    route.config = { ...route.config, auth: "public", ...(asset ? { rateLimit: "skip" } : {}) };
  });
  // Only reply.sendFile: this plugin chooses which file answers which path, and @fastify/static streams it
  // (ranges, ETag, conditional requests). The build may appear after the server starts, hence no warning.
  // preCompressed: the .br or .gz copy the build wrote beside a file, when the browser accepts it (Vary: Accept-Encoding).
  await app.register(fastifyStatic, { root: dir, serve: false, suppressWarning: true, preCompressed: true });

  const sendIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!(await isFile(path.join(dir, "index.html")))) {
      const error = dashboardNotBuilt(dir);
      if (!wantsHtml(request.headers.accept)) throw error;
      return reply
        .code(error.status)
        .header("cache-control", "no-store")
        .type("text/html")
        .send(notBuiltPage(error));
    }
    return reply
      .header("cache-control", everyTime)
      .header("content-security-policy", dashboardContentSecurityPolicy)
      .sendFile("index.html", dir, ownCacheControl);
  };

  app.get("/assets/*", { schema: { hide: true } }, async (request, reply) => {
    const name = (request.params as { "*": string })["*"];
    const file = path.join(assetsDir, name);
    if (!file.startsWith(`${assetsDir}${path.sep}`) || !(await isFile(file))) return reply.callNotFound();
    return reply.header("cache-control", forGood).sendFile(name, assetsDir, ownCacheControl);
  });

  app.get("/*", { schema: { hide: true } }, async (request, reply) => {
    // The path below where this plugin is mounted (/ in app.ts; tests mount it under a prefix too).
    const pathname = `/${(request.params as { "*": string })["*"]}`;
    if (isApiPath(pathname)) return reply.callNotFound();
    const name = topLevelFile.exec(pathname)?.[1];
    if (name && name !== "index.html" && (await isFile(path.join(dir, name)))) {
      return reply.header("cache-control", everyTime).sendFile(name, dir, ownCacheControl);
    }
    if (pathname !== "/" && !wantsHtml(request.headers.accept)) return reply.callNotFound();
    return sendIndex(request, reply);
  });
};
