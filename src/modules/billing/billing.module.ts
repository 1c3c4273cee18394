import { Module, type OnModuleInit } from '@nestjs/common';
import { microsToUsd } from '../../../libs/common/index.js';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { Metrics } from '../../observability/metrics.service.js';
import { PRICE_CATALOGUE_OVERRIDE, PriceCatalogue, StaticPriceCatalogue } from './price-catalogue.js';
import { WalletController } from './wallet.controller.js';
import { WalletCoreModule } from './wallet-core.module.js';
import { WalletRepository } from './wallet.repository.js';
import { WalletService } from './wallet.service.js';

/** How often the settlement journal is replayed (an entry is replayed once JOURNAL_REPLAY_MIN_AGE_MS old). */
const JOURNAL_REPLAY_INTERVAL_MS = 5_000;

@Module({
  imports: [
    WalletCoreModule,
    ErrorDomainsModule.forFeature({ domain: 'wallet', pathPrefixes: ['/api/svc/v1/wallet'] }),
  ],
  controllers: [WalletController],
  providers: [
    {
      // The static price list unless a global module provides an override (docs/extending.md).
      provide: PriceCatalogue,
      inject: [{ token: PRICE_CATALOGUE_OVERRIDE, optional: true }],
      useFactory: (override?: PriceCatalogue) => override ?? new StaticPriceCatalogue(),
    },
  ],
  exports: [WalletCoreModule, PriceCatalogue],
})
export class BillingModule implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly wallets: WalletRepository,
    private readonly wallet: WalletService,
    private readonly periodic: PeriodicTasks,
  ) {}

  onModuleInit(): void {
    // Hold outcomes written while the database was unreachable are taken to it once it is back.
    this.periodic.register({
      name: 'wallet-settlement-journal',
      intervalMs: JOURNAL_REPLAY_INTERVAL_MS,
      runOnBoot: true,
      run: async () => {
        await this.wallet.replayJournal();
      },
    });
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
