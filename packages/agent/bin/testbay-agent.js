#!/usr/bin/env node
// Runs the agent's TypeScript sources through tsx, like testbay and testbay-server: no build step.
import { register } from "tsx/esm/api";

register();
const { runFromProcess } = await import("../src/cli/main.ts");
process.exitCode = await runFromProcess();
