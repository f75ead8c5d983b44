// The baselines for uploads: a bare node:http server that pipes every request body into a new file under
// BENCH_SINK_DIR and answers 201 with the bytes written. No parsing or checks: the raw cost of loopback to
// disk, on the same file system as Testbay's data dir. With BENCH_SINK_HASH=sha256 it also hashes the body
// as it goes by (one more listener on the same chunks, no stream of its own) and answers with the digest:
// the least any server that verifies what it receives can do, so the limit for Testbay's uploads.
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import http from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { portOf, serveForBenchmark } from "./lifecycle.ts";

export interface SinkReady {
  port: number;
  dir: string;
  /** The hash computed over each body, if any. */
  hash: "sha256" | undefined;
}

serveForBenchmark<SinkReady>(async () => {
  const dir = process.env.BENCH_SINK_DIR;
  if (!dir) throw new Error("BENCH_SINK_DIR must name the directory bodies are written to");
  const hashVariable = process.env.BENCH_SINK_HASH || undefined;
  if (hashVariable !== undefined && hashVariable !== "sha256") {
    throw new Error("BENCH_SINK_HASH may only be sha256");
  }
  const hashName: SinkReady["hash"] = hashVariable;
  let received = 0;
  const server = http.createServer((request, response) => {
    const file = createWriteStream(path.join(dir, `${process.pid}-${++received}.bin`), {
      flags: "wx",
      mode: 0o600,
    });
    const hash = hashName ? createHash(hashName) : undefined;
    if (hash) request.on("data", (chunk: Buffer) => hash.update(chunk));
    pipeline(request, file).then(
      () => {
        response.writeHead(201, { "content-type": "application/json" });
        response.end(JSON.stringify({ size_bytes: file.bytesWritten, sha256: hash?.digest("hex") }));
      },
      (error: unknown) => {
        if (response.headersSent || response.destroyed) return;
        response.writeHead(500, { "content-type": "text/plain", connection: "close" });
        response.end(error instanceof Error ? error.message : String(error));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return {
    ready: { port: portOf(server.address()), dir, hash: hashName },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
});
