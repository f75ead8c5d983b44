import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The server serves dist/ at / (packages/server/src/features/web): hashed files under assets/ are cached for good,
// index.html never. In development, `npm run dev -w packages/web` proxies the API to a server on :8080.
const api = ["/v1", "/auth", "/downloads", "/docs", "/problems", "/healthz", "/readyz", "/.well-known"];

export default defineConfig({
  plugins: [react(), tailwindcss()],
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: true },
  server: {
    proxy: Object.fromEntries(api.map((prefix) => [prefix, "http://127.0.0.1:8080"])),
  },
});
