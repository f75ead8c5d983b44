#!/usr/bin/env node
// The server runs its TypeScript sources through tsx: no build step stands between a checkout and a server.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
