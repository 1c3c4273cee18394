import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { HoldEntity } from './hold.entity.js';
import { LedgerEntryEntity } from './ledger-entry.entity.js';
import { SettlementJournal } from './settlement-journal.js';
import { WalletEntity } from './wallet.entity.js';
import { WalletRepository } from './wallet.repository.js';
import { WalletService } from './wallet.service.js';

/**
 * Wallets, holds and the ledger without the HTTP side, the periodic journal replay or the gauges:
 * what BillingModule builds on and what the operator CLI boots on its own (docs/decisions.md ›
 * CLI boot). It needs `Metrics`, `Clock`, `AppConfig` and the `REDIS` client from the platform.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WalletEntity, HoldEntity, LedgerEntryEntity])],
  providers: [WalletRepository, WalletService, SettlementJournal],
  exports: [WalletRepository, WalletService],
})
export class WalletCoreModule {}
