/**
 * Reproducible randomness for simulations: the same seed gives the same numbers on every machine, so a
 * simulated benchmark's result can be rerun and compared.
 */

/** Uniform numbers in [0, 1) from a 32-bit seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A factor whose logarithm is normal with mean 0 and deviation `sigma` (Box–Muller): run-to-run variation of
 * a duration, multiplicative and never negative. sigma 0.2 puts two thirds of the factors within ±20 %.
 */
export function logNormalFactor(random: () => number, sigma: number): number {
  const u = 1 - random(); // (0, 1]: log(0) is not a number
  const v = random();
  return Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}
