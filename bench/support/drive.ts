import { cpus } from 'node:os';

/** One call's outcome: whether it succeeded and how long it took, in ms. */
export interface CallResult {
  ok: boolean;
  ms: number;
}

export interface DriveResult {
  seconds: number;
  failures: number;
  /** Every call's latency in ms, in completion order. */
  latencies: number[];
}

/** Runs `total` calls of `call` over `clients` concurrent loops (each starts its next call when one ends). */
export async function drive(total: number, clients: number, call: () => Promise<CallResult>): Promise<DriveResult> {
  let next = 0;
  let failures = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        next++;
        const result = await call();
        latencies.push(result.ms);
        if (!result.ok) failures++;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failures, latencies };
}

/** The `p`th percentile (nearest rank) of `values`. */
export const percentile = (values: number[], p: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

/** The machine line every benchmark prints first, so figures are read against their hardware. */
export function describeMachine(): string {
  return `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`;
}

/** Runs a benchmark's `main` as the process: exit 0 when it ends, 1 (with the error) when it throws. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
