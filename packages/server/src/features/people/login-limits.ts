import type { RateLimitPolicy } from "../ratelimit/index.ts";

/** Failed sign-ins allowed per account, and per client address, in `windowSeconds`. */
export interface LoginLimitSettings {
  perAccount: number;
  perAddress: number;
  windowSeconds: number;
}

export const defaultLoginLimits: LoginLimitSettings = {
  perAccount: 10,
  perAddress: 30,
  windowSeconds: 15 * 60,
};

/**
 * A failure count as the shared rate limiter keeps it (GCRA, so in Redis when configured: every instance sees
 * the same count). `fail` is charged once per failed sign-in; `probe` asks, before the password is checked,
 * whether the count is spent. Failures are regained steadily: one every `windowSeconds / failures`.
 *
 * The limiter only has "consume". A probe is a consume so small it changes next to nothing: it costs a
 * thousandth of a failure, and its capacity is set so that it is refused once `failures` failures are
 * unspent. Both capacities carry a tenth of a failure of slack, which absorbs float rounding and up to a
 * hundred probes between two failures. So a correct password is refused like a wrong one once the limit is
 * reached, and a successful sign-in never resets anything (nor touches the count of other accounts from the
 * same address). That probes cost a little is the price of not widening the limiter's port.
 */
export interface FailureCount {
  fail: RateLimitPolicy;
  probe: RateLimitPolicy;
}

const probeFraction = 1000;
const slack = 0.1;

export function failureCount(name: string, failures: number, windowSeconds: number): FailureCount {
  const perSecond = failures / windowSeconds;
  return {
    fail: { name, burst: failures + slack, perSecond },
    probe: {
      name,
      burst: (failures - 1 + slack) * probeFraction,
      perSecond: perSecond * probeFraction,
    },
  };
}

export function loginLimitPolicies(settings: LoginLimitSettings) {
  return {
    account: failureCount("login-account", settings.perAccount, settings.windowSeconds),
    address: failureCount("login-address", settings.perAddress, settings.windowSeconds),
  };
}
