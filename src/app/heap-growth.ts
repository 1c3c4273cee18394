import { setFlagsFromString } from 'node:v8';

/**
 * The V8 flag that fixes how far the old generation may grow past what survived the last major
 * collection, or null to leave V8's own factor (docs/decisions.md › Heap growth).
 *
 * V8 picks a factor of up to 4× the surviving size, from how fast it collects and how fast the
 * program allocates: under load it lets garbage pile up to four times the live heap before it
 * collects again, which is most of an API process's peak RSS. A fixed factor collects sooner
 * without capping the heap: a request that needs more memory (20 MiB media parts, inlined)
 * still gets it. A `--heap-growing-percent` given to node on the command line wins.
 */
export function heapGrowingFlag(percent: number, execArgv: readonly string[]): string | null {
  if (percent === 0) return null;
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return null;
  return `--heap-growing-percent=${percent}`;
}

/**
 * Applies HEAP_GROWING_PERCENT to this process. V8 reads the flag each time it sets the next
 * collection's limit, so it holds from the next collection on: call it at boot, before the load.
 */
export function applyHeapGrowth(percent: number): void {
  const flag = heapGrowingFlag(percent, process.execArgv);
  if (flag) setFlagsFromString(flag);
}
