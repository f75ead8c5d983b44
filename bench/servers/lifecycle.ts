import type { AddressInfo } from "node:net";

export interface StartedServer<Ready extends object> {
  /** Sent to the parent with `type: "ready"` once the server listens. */
  ready: Ready;
  close(): Promise<void>;
}

/**
 * The life of a benchmark server process (started by bench/lib/server-process.ts): start, tell the parent
 * over IPC, and close on SIGTERM, SIGINT or when the parent goes away (the IPC channel closes), so no
 * server outlives the benchmark that started it.
 */
export function serveForBenchmark<Ready extends object>(start: () => Promise<StartedServer<Ready>>): void {
  const send = process.send?.bind(process);
  if (!send) {
    console.error("This is a benchmark server: run it through `npm run bench`, not by hand.");
    process.exit(2);
  }
  let server: StartedServer<Ready> | undefined;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), 5000).unref();
    (server ? server.close() : Promise.resolve()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  process.once("disconnect", stop);

  start().then(
    (started) => {
      server = started;
      if (stopping) void started.close().finally(() => process.exit(0));
      else send({ type: "ready", ...started.ready });
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

export function portOf(address: string | AddressInfo | null): number {
  if (typeof address !== "object" || !address) throw new Error("the server has no address");
  return address.port;
}
