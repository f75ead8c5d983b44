// Spawned by log-flush.test.ts: a server logging to stdout through its buffered destination, as
// `testbay-server start` does, that answers one request and then ends the way argv[2] says, to show that
// the lines still held in the buffer reach stdout. argv[3] is a data dir of its own.
import { buildApp } from "../app.ts";
import { loadConfig } from "../config.ts";
import { closeOnSignals, logCrashes } from "../main.ts";

const [ending, dataDir] = process.argv.slice(2);
const app = await buildApp({
  config: loadConfig({ TESTBAY_DATA_DIR: dataDir, TESTBAY_LOG_LEVEL: "info", TESTBAY_LOCAL_AGENT: "false" }),
});
closeOnSignals(app);
logCrashes(app);
await app.inject({ method: "GET", url: "/healthz", headers: { "x-request-id": "before-the-end" } });

switch (ending) {
  case "throw":
    setImmediate(() => {
      throw new Error("crashing on purpose");
    });
    break;
  case "reject":
    void Promise.reject(new Error("rejecting on purpose"));
    break;
  case "sigterm":
    process.kill(process.pid, "SIGTERM");
    break;
  default:
    throw new Error(`unknown ending ${ending}`);
}
