import path from "node:path";
import type { WebhooksInstanceReady } from "../servers/webhooks-instance.ts";
import type { CleanupScope } from "./cleanup.ts";
import { repoRoot } from "./paths.ts";
import {
  type ReadyMessage,
  type ServerProcess,
  startServerProcess,
  testbayNodeFlags,
} from "./server-process.ts";

export type TestbayInstance = ServerProcess<WebhooksInstanceReady & ReadyMessage>;

/**
 * Starts `count` Testbay server processes (bench/servers/webhooks-instance.ts: Testbay as `testbay-server start`
 * builds it) on the environment given, one after the other: the first makes the data dir's signing key and seeds
 * the ci and agent clients, the next ones read them. Each one's stdout goes to `<dir>/<setup>-<i>.log`.
 */
export async function startTestbayInstances(options: {
  bench: string;
  setup: string;
  count: number;
  env: Record<string, string>;
  dir: string;
  scope: CleanupScope;
  log: (line: string) => void;
}): Promise<TestbayInstance[]> {
  const { bench, setup, count, env, dir, scope, log } = options;
  const instances: TestbayInstance[] = [];
  for (let i = 0; i < count; i++) {
    log(`${bench}: starting ${setup} instance ${i + 1} of ${count}`);
    instances.push(
      await startServerProcess<WebhooksInstanceReady & ReadyMessage>(
        {
          label: `${setup}-${i}`,
          entry: path.join(repoRoot, "bench/servers/webhooks-instance.ts"),
          nodeFlags: testbayNodeFlags,
          env: { ...env, BENCH_SEED: i === 0 ? "1" : "0" },
          stdoutFile: path.join(dir, `${setup}-${i}.log`),
          readyTimeoutMs: 60_000,
        },
        scope,
      ),
    );
  }
  return instances;
}
