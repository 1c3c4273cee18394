import { type ChildProcess, fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.js';
import { TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestApp } from './test-app.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface WorkerChildOptions {
  /** Environment the worker adds to the shared one (outbound allowances). */
  env?: Record<string, string>;
  /** The child's temporary folder (TMPDIR), to watch what it writes there. */
  tmpDir?: string;
}

/**
 * Worker processes of `api`'s database, Redis prefix and media folder, started with `start` and
 * killed for real (SIGKILL) with `kill`; `killAll` in the suite's `after` ends any left.
 */
export class WorkerChildren {
  private readonly children: ChildProcess[] = [];

  constructor(private readonly api: () => TestApp) {}

  /** Resolves once the worker has booted (the child says `ready`). */
  async start(options: WorkerChildOptions = {}): Promise<ChildProcess> {
    const api = this.api();
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: api.db.url,
      DATABASE_CREATE_IF_MISSING: 'false',
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: api.queuePrefix,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MEDIA_DIR: api.mediaDir,
      PUBLIC_BASE_URL: api.baseUrl,
      LOG_LEVEL: 'silent',
      DEMO_SEED: 'false',
      ...options.env,
    };
    const childEnv = { ...process.env, ...(options.tmpDir ? { TMPDIR: options.tmpDir } : {}), SVC_CHILD_ENV: JSON.stringify(env) };
    const child = fork(join(here, 'worker-child.js'), [], { env: childEnv, stdio: 'inherit' });
    this.children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`worker child exited early (${code})`)));
    });
    return child;
  }

  /** SIGKILL: no shutdown hooks, no lock release; resolves once the process is gone. */
  async kill(child: ChildProcess): Promise<void> {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  killAll(): void {
    for (const child of this.children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** Waits until the task row `id` of `table` (`video_task`, `audio_task`) is in `phase`. */
export async function waitForTaskPhase(api: TestApp, table: string, id: string, phase: string, timeoutMs = 30_000): Promise<void> {
  const phaseOf = async () => (await api.db.query<{ phase: string | null }>(`SELECT phase FROM ${table} WHERE id = $1`, [id]))[0]?.phase;
  await eventually(phaseOf, (seen) => seen === phase, `task ${id} reaching ${phase}`, timeoutMs);
}
