#!/usr/bin/env node
// The CLI runs its TypeScript sources through tsx, like testbay-server: no build step between a checkout and a run.
import { register } from "tsx/esm/api";

register();
const { runFromProcess } = await import("../src/cli/main.ts");
process.exitCode = await runFromProcess();
