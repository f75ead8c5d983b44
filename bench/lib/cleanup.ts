type Task = () => unknown;

const open = new Set<CleanupScope>();

/**
 * Undo steps (stop a child, remove a temp dir) run last-in first-out by `close()`, which a benchmark calls
 * in `finally`; the runner also closes every open scope on SIGINT/SIGTERM before exiting.
 */
export class CleanupScope {
  private readonly tasks: Task[] = [];

  constructor() {
    open.add(this);
  }

  defer(task: Task): void {
    this.tasks.push(task);
  }

  /** Runs every step even if some fail; failures are reported, not thrown, so they never hide the real error. */
  async close(): Promise<void> {
    open.delete(this);
    for (let task = this.tasks.pop(); task; task = this.tasks.pop()) {
      try {
        await task();
      } catch (error) {
        console.error(`cleanup step failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

export async function closeAllScopes(): Promise<void> {
  await Promise.all([...open].map((scope) => scope.close()));
}
