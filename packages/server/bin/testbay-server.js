#!/usr/bin/env -S node --initial-old-space-size=128
// --initial-old-space-size=128: after a full GC V8 sets the next old-generation limit at only ~1.1× the live
// heap for a process that allocates as little as this one, and the ~64 KiB buffers of an upload body then
// trigger a full GC every few megabytes. A 500 MiB upload cost ~2.5-3.5 s of CPU (20-40 full GCs) instead
// of ~1.2 s (none) once the server had collected once (after idle); the floor costs ~20 MiB of RSS.
// Measured in bench/README.md ("upload"); the benchmarks start Testbay with the flags of this line.
// "#cli" resolves to the compiled dist/ for `npm start` and every installed server. In this repository's tests
// and development (node run with --conditions=source) it resolves to the TypeScript sources, which need tsx.
if (import.meta.resolve("#cli").endsWith(".ts")) (await import("tsx/esm/api")).register();
await import("#cli");
