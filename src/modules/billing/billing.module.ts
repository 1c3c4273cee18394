import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { microsToUsd } from '../../../libs/common/index.js';
import { Metrics } from '../health/metrics.service.js';
import { HoldEntity } from './hold.entity.js';
import { LedgerEntryEntity } from './ledger-entry.entity.js';
import { WalletController } from './wallet.controller.js';
import { WalletEntity } from './wallet.entity.js';
import { WalletRepository } from './wallet.repository.js';
import { WalletService } from './wallet.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([WalletEntity, HoldEntity, LedgerEntryEntity])],
  controllers: [WalletController],
  providers: [WalletRepository, WalletService],
  exports: [WalletService],
})
export class BillingModule implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly wallets: WalletRepository,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge('svc_wallet_open_holds', 'Open wallet holds', [], async (gauge) => {
      gauge.set((await this.wallets.openHolds()).count);
    });
    this.metrics.gauge('svc_wallet_held_usd', 'USD reserved by open holds', [], async (gauge) => {
      gauge.set(microsToUsd((await this.wallets.openHolds()).micros));
    });
    // Group commit: database calls made and requests they carried since start (calls < requests: batches form).
    this.metrics.gauge('svc_wallet_group_commit_calls', 'Wallet database calls made by the group commit since start', ['operation'], async (gauge) => {
      const { holds, resolutions } = this.wallets.batchCounters();
      gauge.set({ operation: 'hold' }, holds.calls);
      gauge.set({ operation: 'resolve' }, resolutions.calls);
    });
    this.metrics.gauge('svc_wallet_group_commit_requests', 'Wallet requests carried by the group commit since start', ['operation'], async (gauge) => {
      const { holds, resolutions } = this.wallets.batchCounters();
      gauge.set({ operation: 'hold' }, holds.items);
      gauge.set({ operation: 'resolve' }, resolutions.items);
    });
  }
}
