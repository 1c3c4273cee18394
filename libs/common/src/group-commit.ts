/**
 * Group commit in the app: at most one call of `run` is in flight; requests that arrive while
 * it is queue in memory, and when it returns everything queued (up to `maxBatch`) goes in the
 * next single call. A request that finds nothing in flight goes at once, alone: no timer, no
 * added latency at one client.
 *
 * `run` answers one result per item, in order; a result may itself be a promise (an item that
 * has to be retried on its own), which does not hold up the next batch. When `run` throws, every
 * item of that batch gets the error.
 */
export class GroupCommit<I, O> {
  private readonly queue: Array<{ item: I; resolve: (result: O | PromiseLike<O>) => void; reject: (error: unknown) => void }> = [];
  private busy = false;
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
      if (!this.busy) void this.drain();
    });
  }

  /** Calls made, items carried, largest batch: calls < items means batches formed. */
  counters(): { calls: number; items: number; largest: number } {
    return { ...this.stats };
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
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
