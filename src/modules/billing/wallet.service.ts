import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CommonErrorCode, DomainError, microsToUsd, notFound } from '../../../libs/common/index.js';
import { isConnectionError, retryOnConnectionError } from '../../database/connection-errors.js';
import type { TransactionHandle } from '../../database/transaction.js';
import { Metrics } from '../../observability/metrics.service.js';
import type { KeyEnvironment } from '../identity/index.js';
import type { LedgerEntryEntity, LedgerKind } from './ledger-entry.entity.js';
import { JOURNAL_REPLAY_MIN_AGE_MS, type JournalEntry, SettlementJournal } from './settlement-journal.js';
import type { HoldStatus } from './hold.entity.js';
import { type HoldInput, type HoldResolution, type LedgerFilter, type ResolvedHold, WalletRepository } from './wallet.repository.js';

/** A hold's journal entry that frees it (nothing charged). */
const releaseOf = (holdId: string, heldFor?: HoldInput): Omit<JournalEntry, 'at'> => ({ holdId, status: 'released', measuredMicros: 0n, ...(heldFor && { heldFor }) });

/** What a settlement leaves in the journal if the database stays unreachable (see `settle`). */
export type IfUnrecorded = 'charge' | 'release';

export interface WalletResource {
  balanceUsd: number;
  heldUsd: number;
  availableUsd: number;
}

/** One ledger entry as other modules see it (a plain object, never the entity). */
export interface LedgerEntry {
  id: bigint;
  workspaceId: string;
  environment: KeyEnvironment;
  kind: LedgerKind;
  amountMicros: bigint;
  holdId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  reference: string | null;
  createdAt: Date;
}

/** One hold as other modules see it. */
export interface HoldSummary {
  id: string;
  environment: KeyEnvironment;
  status: HoldStatus;
  amountMicros: bigint;
  capturedMicros: bigint;
  uncollectedMicros: bigint;
  subjectType: string;
  subjectId: string;
  createdAt: Date;
  resolvedAt: Date | null;
}

/** Open holds released per query by `releaseAbandoned`. */
const ABANDONED_BATCH = 500;

/**
 * The prepaid wallet (DESIGN §5): hold the most an operation can cost, then settle on measured
 * usage (the rest is released) or release it all. Settle and release are idempotent; credit is
 * idempotent by reference. Other modules call this facade, never the repository.
 */
@Injectable()
export class WalletService {
  private readonly logger = new Logger(WalletService.name);

  constructor(
    private readonly wallets: WalletRepository,
    private readonly journal: SettlementJournal,
    private readonly metrics: Metrics,
  ) {}

  async figures(workspaceId: string, environment: KeyEnvironment): Promise<WalletResource> {
    const { balanceMicros, heldMicros } = await this.wallets.figures(workspaceId, environment);
    return toWalletResource(balanceMicros, heldMicros);
  }

  /** Live and test figures of many workspaces in one query (a workspace never credited shows zeros). */
  async figuresOf(workspaceIds: string[]): Promise<Map<string, Record<KeyEnvironment, WalletResource>>> {
    const zero = toWalletResource(0n, 0n);
    const result = new Map<string, Record<KeyEnvironment, WalletResource>>(workspaceIds.map((id) => [id, { live: zero, test: zero }]));
    for (const row of await this.wallets.figuresOf(workspaceIds)) {
      const entry = result.get(row.workspaceId);
      if (entry) entry[row.environment] = toWalletResource(row.balanceMicros, row.heldMicros);
    }
    return result;
  }

  /**
   * Reserves the amount or refuses with 402. Pass the caller's transaction (`inTransaction`) to
   * make the hold commit with the task row that owns it (that transaction's failure is its
   * owner's to handle). Alone, a hold rides out lost connections: before trying again it looks
   * whether the lost try had committed, so a hold is never made twice.
   */
  async hold(input: HoldInput, tx?: TransactionHandle): Promise<string> {
    if (input.amountMicros <= 0n) throw new RangeError('a hold must be for a positive amount');
    const holdId = randomUUID();
    const made = tx
      ? await this.wallets.hold(holdId, input, tx)
      : // Should the database stay away, a hold made by a lost try is released once it is back.
        await this.reliably(releaseOf(holdId), async (retrying) =>
          retrying && (await this.wallets.holdExists(holdId)) ? holdId : this.wallets.hold(holdId, input),
        );
    if (made === null) {
      throw new DomainError(
        402,
        CommonErrorCode.InsufficientBalance,
        `insufficient balance: this request needs up to ${microsToUsd(input.amountMicros)} USD available`,
      );
    }
    return made;
  }

  /**
   * Several holds in the caller's transaction (a batch of task creations), judged in the given
   * order exactly as `hold(input, tx)` one after another would be: each answer is the hold id,
   * or the 402 that `hold` would have thrown (nothing written for it).
   */
  async holdEach(inputs: HoldInput[], tx: TransactionHandle): Promise<Array<string | DomainError>> {
    for (const input of inputs) if (input.amountMicros <= 0n) throw new RangeError('a hold must be for a positive amount');
    const made = await this.wallets.holdMany(tx, inputs.map((input) => ({ holdId: randomUUID(), input })));
    return made.map((holdId, i) => holdId ?? insufficientBalance(inputs[i]!.amountMicros));
  }

  /**
   * Charges the measured cost, never more than the hold, and releases the rest. A measured cost
   * above the hold is charged as the hold; the excess is logged and counted, never taken from the
   * rest of the wallet. If the database stays unreachable, the journal keeps what the hold must
   * become (`ifUnrecorded`: the charge, when the client got what it pays for; a release, when the
   * caller will not deliver it) and the call fails with the connection error (503 at the HTTP edge).
   *
   * `heldFor`, the input the hold was made with, is for holds made on the pool: their commit is
   * asynchronous, so a database crash can lose one whose request has not settled yet. Such a
   * hold is then charged directly (see `resolve`); without `heldFor` a missing hold is a 404.
   */
  async settle(holdId: string, measuredMicros: bigint, ifUnrecorded: IfUnrecorded = 'charge', heldFor?: HoldInput): Promise<HoldResolution> {
    if (measuredMicros < 0n) throw new RangeError('measured cost cannot be negative');
    const fallback = ifUnrecorded === 'charge' ? { holdId, status: 'settled' as const, measuredMicros, ...(heldFor && { heldFor }) } : releaseOf(holdId, heldFor);
    return this.resolve(holdId, measuredMicros, 'settled', fallback, heldFor);
  }

  /** Releases the whole hold; nothing is charged (`heldFor`: see `settle`). */
  release(holdId: string, heldFor?: HoldInput): Promise<HoldResolution> {
    return this.resolve(holdId, 0n, 'released', releaseOf(holdId, heldFor), heldFor);
  }

  /**
   * Releases the open holds of `subjectType` made before `olderThan`: holds a process left when
   * it died mid-request (a periodic task of the domain that owns them). Nothing is charged.
   * Returns how many it released (a hold resolved meanwhile is not counted).
   */
  async releaseAbandoned(subjectType: string, olderThan: Date): Promise<number> {
    let released = 0;
    for (;;) {
      const ids = await this.wallets.openHoldsBefore(subjectType, olderThan, ABANDONED_BATCH);
      for (const id of ids) if ((await this.release(id)).changed) released++;
      if (ids.length < ABANDONED_BATCH) return released;
    }
  }

  /**
   * Takes to the database what the journal kept while it was unreachable (a periodic task): the
   * entries old enough to be left by their requests; stops at the first lost connection. Returns
   * how many holds it resolved.
   */
  async replayJournal(): Promise<number> {
    let resolved = 0;
    for (const entry of await this.journal.due(JOURNAL_REPLAY_MIN_AGE_MS)) {
      try {
        const resolution = await this.resolveOrChargeLost(entry.holdId, entry.measuredMicros, entry.status, entry.heldFor);
        if (resolution?.changed) resolved++;
      } catch (error) {
        if (isConnectionError(error)) break;
        throw error;
      }
      await this.journal.forget(entry.holdId);
    }
    if (resolved > 0) this.logger.warn(`settlement journal: ${resolved} holds resolved after the database came back`);
    return resolved;
  }

  /**
   * Adds money, once per reference. Repeating a reference with the same amount is a no-op;
   * with another amount it is a conflict (the caller most likely mixed up two top-ups).
   */
  async credit(workspaceId: string, environment: KeyEnvironment, amountMicros: bigint, reference: string): Promise<{ applied: boolean }> {
    if (amountMicros <= 0n) throw new RangeError('a credit must be positive');
    const result = await this.wallets.credit(workspaceId, environment, amountMicros, reference);
    if (!result.applied && result.recordedMicros !== amountMicros) {
      throw new DomainError(
        409,
        CommonErrorCode.Conflict,
        `reference "${reference}" was already used for a credit of ${microsToUsd(result.recordedMicros)} USD`,
      );
    }
    return { applied: result.applied };
  }

  /** Ledger entries newest first (`limit + 1` rows, for paging). */
  async listLedger(workspaceId: string, limit: number, beforeId?: bigint, filter: LedgerFilter = {}): Promise<LedgerEntry[]> {
    return (await this.wallets.listLedger(workspaceId, limit, beforeId, filter)).map(toLedgerEntry);
  }

  /** Holds by id, oldest first (unknown ids are left out). */
  async holds(ids: string[]): Promise<HoldSummary[]> {
    return (await this.wallets.holdsByIds(ids)).map((row) => ({
      id: row.id,
      environment: row.environment,
      status: row.status,
      amountMicros: row.amountMicros,
      capturedMicros: row.capturedMicros,
      uncollectedMicros: row.uncollectedMicros,
      subjectType: row.subjectType,
      subjectId: row.subjectId,
      createdAt: row.createdAt,
      resolvedAt: row.resolvedAt,
    }));
  }

  /** Every open hold: how many and how much they hold (micro-USD). */
  openHolds(): Promise<{ count: number; micros: bigint }> {
    return this.wallets.openHolds();
  }

  private async resolve(
    holdId: string,
    measuredMicros: bigint,
    status: 'settled' | 'released',
    fallback: Omit<JournalEntry, 'at'>,
    heldFor: HoldInput | undefined,
  ): Promise<HoldResolution> {
    const resolution = await this.reliably(fallback, () => this.resolveOrChargeLost(holdId, measuredMicros, status, heldFor));
    if (!resolution) throw notFound('hold');
    if (resolution.changed && !resolution.lost) {
      this.logger.log({
        msg: status === 'settled' ? 'hold settled' : 'hold released',
        holdId,
        capturedUsd: microsToUsd(resolution.capturedMicros),
        releasedUsd: microsToUsd(resolution.amountMicros - resolution.capturedMicros),
      });
    }
    const { status: final, amountMicros, capturedMicros, uncollectedMicros, changed } = resolution;
    return { status: final, amountMicros, capturedMicros, uncollectedMicros, changed };
  }

  /**
   * Resolves the hold; when the database has no such hold and its input is known, resolves it as
   * a hold lost with its asynchronous commit (WalletRepository.chargeLostHold). Both steps are
   * idempotent, so the whole is safe to repeat. Logs and counts what it changed.
   */
  private async resolveOrChargeLost(
    holdId: string,
    measuredMicros: bigint,
    status: 'settled' | 'released',
    heldFor: HoldInput | undefined,
  ): Promise<(ResolvedHold & { lost: boolean }) | null> {
    const found = await this.wallets.resolve(holdId, measuredMicros, status);
    if (found) {
      this.noteExcess(holdId, found);
      this.noteCaptured(found);
      return withLost(found, false);
    }
    if (!heldFor) return null;
    const lost = await this.wallets.chargeLostHold(holdId, heldFor, measuredMicros, status);
    if (!lost) return null;
    this.noteCaptured(lost);
    if (lost.changed) {
      if (status === 'settled') this.metrics.walletLostHoldsCharged.inc();
      this.logger.warn({
        msg: `hold missing (a database crash lost its asynchronous commit): ${status === 'settled' ? 'charged directly with an adjust entry' : 'released, nothing charged'}`,
        holdId,
        subjectType: heldFor.subjectType,
        subjectId: heldFor.subjectId,
        holdUsd: microsToUsd(heldFor.amountMicros),
        measuredUsd: microsToUsd(measuredMicros),
        chargedUsd: microsToUsd(lost.capturedMicros),
        uncollectedUsd: microsToUsd(lost.uncollectedMicros),
      });
    }
    return withLost(lost, true);
  }

  /** Money a resolution charged, by the hold's subject type. */
  private noteCaptured(resolution: ResolvedHold): void {
    if (!resolution.changed || resolution.capturedMicros <= 0n) return;
    this.metrics.moneyCaptured.inc({ kind: resolution.subjectType ?? 'unknown' }, Number(resolution.capturedMicros));
  }

  /**
   * Runs a wallet write that is safe to repeat (`retrying` tells a try that an earlier one lost
   * its connection), retrying after lost connections with a short backoff. On the first loss the
   * hold's fallback outcome goes to the journal (so a crash while retrying loses nothing); it is
   * dropped once a try succeeds. When the database stays unreachable the last connection error
   * is thrown (the HTTP filter answers it with 503) and the journal keeps the outcome.
   */
  private async reliably<T>(fallback: Omit<JournalEntry, 'at'>, write: (retrying: boolean) => Promise<T>): Promise<T> {
    let retrying = false;
    let journaled = false;
    try {
      const result = await retryOnConnectionError(() => write(retrying), {
        beforeRetry: async () => {
          this.metrics.walletConnectionRetries.inc();
          if (!retrying) journaled = await this.journal.record(fallback);
          retrying = true;
        },
      });
      if (journaled) await this.journal.forget(fallback.holdId);
      return result;
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      this.metrics.walletJournaled.inc({ outcome: fallback.status });
      this.logger.error({ msg: 'wallet: database unreachable, hold outcome left to the journal', ...fallback, measuredMicros: String(fallback.measuredMicros), journaled, err: error });
      // The global filter answers every lost connection with 503 `<domain>.unavailable`.
      throw error;
    }
  }

  /** A measured cost above the hold was not charged (the hold was): logged and counted. */
  private noteExcess(holdId: string, resolution: HoldResolution): void {
    if (!resolution.changed || resolution.uncollectedMicros <= 0n) return;
    this.metrics.walletChargesCapped.inc();
    this.metrics.walletUncollectedUsd.inc(microsToUsd(resolution.uncollectedMicros));
    this.logger.warn({
      msg: 'measured cost above the hold: charged the hold, the excess is not collected',
      holdId,
      holdUsd: microsToUsd(resolution.amountMicros),
      uncollectedUsd: microsToUsd(resolution.uncollectedMicros),
    });
  }
}

/** The 402 of a hold the available balance does not cover (as `hold` throws it). */
function insufficientBalance(amountMicros: bigint): DomainError {
  return new DomainError(402, CommonErrorCode.InsufficientBalance, `insufficient balance: this request needs up to ${microsToUsd(amountMicros)} USD available`);
}

/** The resolution with whether its hold was lost; `lost` first: properties after a spread are slow on Node 20 (paid-task-columns.ts). */
const withLost = (resolution: ResolvedHold, lost: boolean): ResolvedHold & { lost: boolean } => ({ lost, ...resolution });

function toLedgerEntry(row: LedgerEntryEntity): LedgerEntry {
  const { id, workspaceId, environment, kind, amountMicros, holdId, subjectType, subjectId, reference, createdAt } = row;
  return { id, workspaceId, environment, kind, amountMicros, holdId, subjectType, subjectId, reference, createdAt };
}

export function toWalletResource(balanceMicros: bigint, heldMicros: bigint): WalletResource {
  return {
    balanceUsd: microsToUsd(balanceMicros),
    heldUsd: microsToUsd(heldMicros),
    availableUsd: microsToUsd(balanceMicros - heldMicros),
  };
}
