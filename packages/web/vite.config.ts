import { writeFile } from "node:fs/promises";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

// The server serves dist/ at / (packages/server/src/features/web): hashed files under assets/ are cached for good,
// index.html never. In development, `npm run dev -w packages/web` proxies the API to a server on :8080.
const api = ["/v1", "/auth", "/downloads", "/docs", "/problems", "/healthz", "/readyz", "/.well-known"];

/**
 * Writes a Brotli (.br) and a gzip (.gz) copy beside each script, style sheet and page of the build. The server
 * sends the copy the browser accepts (@fastify/static's preCompressed): measured on the whole build's JavaScript,
 * 618 KB become 173 KB (Brotli) or 196 KB (gzip), and no request pays for compressing.
 */
function precompress(): Plugin {
  return {
    name: "testbay:precompress",
    apply: "build",
    async writeBundle(options, bundle) {
      const outDir = options.dir ?? "dist";
      for (const file of Object.values(bundle)) {
        if (!/\.(js|css|html|svg)$/.test(file.fileName)) continue;
        const bytes = Buffer.from(file.type === "chunk" ? file.code : file.source);
        // Below a kilobyte the headers outweigh what compression saves.
        if (bytes.length < 1024) continue;
        const target = path.join(outDir, file.fileName);
        await writeFile(
          `${target}.br`,
          brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
        await writeFile(`${target}.gz`, gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  plugins: [react(), tailwindcss(), precompress()],
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: true },
  server: {
    proxy: Object.fromEntries(api.map((prefix) => [prefix, "http://127.0.0.1:8080"])),
  },
});
