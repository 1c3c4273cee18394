/** Calls of one request in a row after which requests are taken to arrive alone again. */
const QUIET_AFTER = 4;

/**
 * Group commit in the app: at most one call of `run` is in flight; requests that arrive while
 * it is queue in memory, and when it returns everything queued (up to `maxBatch`) goes in the
 * next single call. A request that finds nothing in flight goes at once, alone (no timer, no
 * added latency at one client), unless requests have lately been arriving together (one of the
 * last QUIET_AFTER calls carried several): then it goes at the end of the event loop's turn
 * (setImmediate) with the others of that turn. Under load a batch's answers let many clients
 * send their next request at once and their reads come in one turn; sent at once, the first of
 * them would go alone and the rest wait for it (issue 17: half the wallet's calls carried one
 * request; docs/benchmarks.md).
 *
 * `run` answers one result per item, in order; a result may itself be a promise (an item that
 * has to be retried on its own), which does not hold up the next batch. When `run` throws, every
 * item of that batch gets the error.
 */
export class GroupCommit<I, O> {
  private readonly queue: Array<{ item: I; resolve: (result: O | PromiseLike<O>) => void; reject: (error: unknown) => void }> = [];
  private busy = false;
  /** Calls in a row that carried one request; from QUIET_AFTER on, a request goes at once. */
  private lone = QUIET_AFTER;
  private stats = { calls: 0, items: 0, largest: 0 };

  constructor(
    private readonly run: (items: I[]) => Promise<Array<O | PromiseLike<O>>>,
    readonly maxBatch = 64,
  ) {
    if (!(maxBatch >= 1)) throw new RangeError('maxBatch must be at least 1');
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.busy) {
        this.busy = true;
        if (this.lone >= QUIET_AFTER) void this.drain();
        else setImmediate(this.drainNow);
      }
    });
  }

  /** Calls made, items carried, largest batch: calls < items means batches formed. */
  counters(): { calls: number; items: number; largest: number } {
    return { ...this.stats };
  }

  private readonly drainNow = (): void => void this.drain();

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.lone = batch.length === 1 ? this.lone + 1 : 0;
        this.stats.calls++;
        this.stats.items += batch.length;
        this.stats.largest = Math.max(this.stats.largest, batch.length);
        try {
          const results = await this.run(batch.map((waiter) => waiter.item));
          if (results.length !== batch.length) throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
          batch.forEach((waiter, i) => waiter.resolve(results[i]!));
        } catch (error) {
          for (const waiter of batch) waiter.reject(error);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}
