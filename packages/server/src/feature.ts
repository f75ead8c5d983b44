import type { FastifyInstance } from "fastify";
import type { BackgroundJobs } from "./background-jobs.ts";

/**
 * What a feature's composition root (`createX` in features/<name>/index.ts) hands app.ts beside its services:
 * app.ts builds the features in dependency order, registers them, starts them, and stops them when the server
 * closes. Each part is optional: a feature without routes or background work leaves it out.
 */
export interface Feature {
  /** Adds the feature's routes. app.ts calls these in the order the OpenAPI document lists the paths. */
  register?(app: FastifyInstance): Promise<void>;
  /** Startup work (clean-ups, the first housekeeping round) and background jobs; runs before the server listens. */
  start?(jobs: BackgroundJobs): Promise<void>;
  /** Stops the feature's background loops when the server closes, while it still answers. */
  stop?(): Promise<void>;
}
