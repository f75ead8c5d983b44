import type { PostgresNotifications } from "../../db/postgres-notifications.ts";
import { LocalWorkSignal, type WorkSignal } from "./work-signal.ts";

const channel = "testbay_work";

/**
 * Wake-ups shared by every API instance on one PostgreSQL database: a trigger on one instance wakes the
 * claims waiting on all of them (NOTIFY with the organization as payload). While the listening connection
 * is down, waiting claims still look again every poll interval.
 */
export class PostgresWorkSignal implements WorkSignal {
  private readonly local = new LocalWorkSignal();

  constructor(private readonly notifications: PostgresNotifications) {
    notifications.on(channel, (organizationId) => this.local.notify(organizationId));
  }

  notify(organizationId: string): void {
    this.notifications.notify(channel, organizationId);
  }

  wait(organizationId: string, ms: number, abort?: AbortSignal): Promise<void> {
    return this.local.wait(organizationId, ms, abort);
  }

  async close(): Promise<void> {
    await this.local.close();
  }
}
