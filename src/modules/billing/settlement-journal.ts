import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { REDIS } from '../../queue/redis.provider.js';
import type { HoldInput } from './wallet.repository.js';

/** What must happen to a hold once the database answers again. */
export interface JournalEntry {
  holdId: string;
  status: 'settled' | 'released';
  measuredMicros: bigint;
  /** What the hold was made with, when the caller gave it: a replay can then charge a hold the database lost (WalletService.settle). */
  heldFor?: HoldInput;
  /** When it was written (ms since the epoch): the replay leaves fresh entries to their request. */
  at: number;
}

/**
 * A journal entry is replayed once it is this old: by then the request that wrote it has either
 * taken its hold's outcome to the database (and dropped the entry) or given up.
 */
export const JOURNAL_REPLAY_MIN_AGE_MS = 30_000;

/** Entries read per replay round (HSCAN count hint). */
const SCAN_COUNT = 200;

/**
 * The wallet's write-ahead record for the moments the database cannot be reached (issue 9 §4,
 * docs/decisions.md › Settlement when the database blinks). When a settlement, a release or a
 * hold loses its connection, the outcome the hold must reach is written here before retrying;
 * it is removed once the database has taken it. What is left — the database stayed down, or the
 * process died while retrying — is replayed later by `WalletService.replayJournal`, so a
 * delivered answer is charged exactly once (resolving a hold is idempotent) and no hold waits
 * for the two-hour sweep.
 *
 * A Redis hash keyed by hold id: the last word on a hold wins (a sync text request that first
 * meant to charge, then gave up on its answer, leaves a release).
 */
@Injectable()
export class SettlementJournal {
  private readonly logger = new Logger(SettlementJournal.name);
  private readonly key: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.key = `${config.env.QUEUE_PREFIX}:wallet:settlement-journal`;
  }

  /** Records what the hold must become; false (logged with the whole entry) when Redis is down too. */
  async record(entry: Omit<JournalEntry, 'at'>): Promise<boolean> {
    const heldFor = entry.heldFor && { ...entry.heldFor, amountMicros: entry.heldFor.amountMicros.toString() };
    const value = JSON.stringify({ status: entry.status, measuredMicros: entry.measuredMicros.toString(), heldFor, at: this.clock.now().getTime() });
    try {
      await this.redis.hset(this.key, entry.holdId, value);
      return true;
    } catch (error) {
      // Neither store answers: the log line is the record an operator can replay by hand.
      this.logger.error({ msg: 'settlement journal unavailable: resolve this hold by hand', holdId: entry.holdId, ...JSON.parse(value), err: error });
      return false;
    }
  }

  /** Drops the entry of a hold the database has taken (best effort: a replay of it changes nothing). */
  async forget(holdId: string): Promise<void> {
    await this.redis.hdel(this.key, holdId).catch((error: unknown) => this.logger.warn({ msg: 'settlement journal: entry left behind', holdId, err: error }));
  }

  /** Entries written at least `minAgeMs` ago, at most about SCAN_COUNT per call. */
  async due(minAgeMs: number): Promise<JournalEntry[]> {
    const [, flat] = await this.redis.hscan(this.key, '0', 'COUNT', SCAN_COUNT);
    const cutoff = this.clock.now().getTime() - minAgeMs;
    const entries: JournalEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const parsed = JSON.parse(flat[i + 1]!) as { status: JournalEntry['status']; measuredMicros: string; heldFor?: Omit<HoldInput, 'amountMicros'> & { amountMicros: string }; at: number };
      if (parsed.at > cutoff) continue;
      const heldFor = parsed.heldFor && { ...parsed.heldFor, amountMicros: BigInt(parsed.heldFor.amountMicros) };
      entries.push({ holdId: flat[i]!, status: parsed.status, measuredMicros: BigInt(parsed.measuredMicros), ...(heldFor && { heldFor }), at: parsed.at });
    }
    return entries;
  }
}
