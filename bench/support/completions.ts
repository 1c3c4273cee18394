import type { TestApp } from '../../test/support/test-app.js';

/**
 * Polls `table` (a task table with `succeeded`/`failed` statuses) until `count` tasks have
 * finished; returns how many of them failed.
 */
export async function waitForFinishedTasks(db: TestApp['db'], table: string, count: number): Promise<number> {
  for (;;) {
    const [row] = await db.query<{ done: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE status = 'succeeded') AS done, count(*) FILTER (WHERE status = 'failed') AS failed FROM ${table}`,
    );
    if (Number(row!.done) + Number(row!.failed) >= count) return Number(row!.failed);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
