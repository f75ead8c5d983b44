#!/usr/bin/env node
// "#cli" resolves to the compiled dist/ for everyone who installed the package. In this repository's tests and
// development (node run with --conditions=source) it resolves to the TypeScript sources, which need tsx.
if (import.meta.resolve("#cli").endsWith(".ts")) (await import("tsx/esm/api")).register();
const { runFromProcess } = await import("#cli");
process.exitCode = await runFromProcess();
