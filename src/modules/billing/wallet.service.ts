import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CommonErrorCode, DomainError, microsToUsd, notFound } from '../../../libs/common/index.js';
import type { KeyEnvironment } from '../identity/api-key.entity.js';
import { type HoldInput, type HoldResolution, WalletRepository } from './wallet.repository.js';

export interface WalletResource {
  balanceUsd: number;
  heldUsd: number;
  availableUsd: number;
}

/**
 * The prepaid wallet (DESIGN §5): hold the most an operation can cost, then settle on measured
 * usage (the rest is released) or release it all. Settle and release are idempotent; credit is
 * idempotent by reference. Other modules call this facade, never the repository.
 */
@Injectable()
export class WalletService {
  constructor(private readonly wallets: WalletRepository) {}

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
   * Reserves the amount or refuses with 402. Pass the transaction's manager to make the hold
   * part of the same transaction as the task row that owns it.
   */
  async hold(input: HoldInput, manager?: EntityManager): Promise<string> {
    if (input.amountMicros <= 0n) throw new RangeError('a hold must be for a positive amount');
    const holdId = await this.wallets.hold(input, manager);
    if (holdId === null) {
      throw new DomainError(
        402,
        CommonErrorCode.InsufficientBalance,
        `insufficient balance: this request needs up to ${microsToUsd(input.amountMicros)} USD available`,
      );
    }
    return holdId;
  }

  /** Charges the measured cost (capped so the wallet never goes negative), releases the rest. */
  async settle(holdId: string, measuredMicros: bigint): Promise<HoldResolution> {
    if (measuredMicros < 0n) throw new RangeError('measured cost cannot be negative');
    return this.resolve(holdId, measuredMicros, 'settled');
  }

  /** Releases the whole hold; nothing is charged. */
  release(holdId: string): Promise<HoldResolution> {
    return this.resolve(holdId, 0n, 'released');
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
  listLedger(workspaceId: string, limit: number, beforeId?: bigint, environment?: KeyEnvironment) {
    return this.wallets.listLedger(workspaceId, limit, beforeId, environment);
  }

  private async resolve(holdId: string, measuredMicros: bigint, status: 'settled' | 'released'): Promise<HoldResolution> {
    const resolution = await this.wallets.resolve(holdId, measuredMicros, status);
    if (!resolution) throw notFound('hold');
    return resolution;
  }
}

export function toWalletResource(balanceMicros: bigint, heldMicros: bigint): WalletResource {
  return {
    balanceUsd: microsToUsd(balanceMicros),
    heldUsd: microsToUsd(heldMicros),
    availableUsd: microsToUsd(balanceMicros - heldMicros),
  };
}
