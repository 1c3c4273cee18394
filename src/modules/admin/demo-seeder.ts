import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { usdToMicros } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { WalletService } from '../billing/wallet.service.js';
import { IdentityService } from '../identity/identity.service.js';

export const DEMO_CREDIT_USD = 25;

/** Session advisory lock taken while seeding, so two instances starting together seed once. */
const SEED_LOCK_KEY = 7_421_003_117;

/**
 * First start of an empty database outside production: a demo workspace with 25 USD and one
 * key, printed once (only its hash is stored), so a newcomer can call the API at once.
 */
@Injectable()
export class DemoSeeder {
  private readonly logger = new Logger(DemoSeeder.name);

  constructor(
    private readonly config: AppConfig,
    private readonly identity: IdentityService,
    private readonly wallet: WalletService,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** Returns the demo key when one was created. */
  async seedOnFirstStart(): Promise<string | null> {
    if (!this.config.env.DEMO_SEED || this.config.isProduction) return null;
    if ((await this.identity.countWorkspaces()) > 0) return null;
    const lock = this.db.createQueryRunner();
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [SEED_LOCK_KEY]);
      // Re-checked under the lock: another instance may have seeded while we waited.
      if ((await this.identity.countWorkspaces()) > 0) return null;
      return await this.seed();
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [SEED_LOCK_KEY]).catch(() => undefined);
      await lock.release();
    }
  }

  private async seed(): Promise<string> {
    const workspace = await this.identity.createWorkspace('Demo workspace');
    await this.wallet.credit(workspace.id, 'live', usdToMicros(DEMO_CREDIT_USD), 'demo-seed');
    const { key } = await this.identity.issueApiKey(workspace.id, 'demo key', 'live');
    const base = this.config.publicBaseUrl;
    // Printed to stdout on purpose (not only the log stream): this is the one time it exists.
    process.stdout.write(
      [
        '',
        '  Demo workspace created with 25 USD. Its API key (shown once, store it now):',
        '',
        `    ${key}`,
        '',
        `  Try:  curl -s ${base}/api/svc/v1/wallet -H "Authorization: Bearer ${key}"`,
        `  Docs: ${base}/docs`,
        '',
      ].join('\n') + '\n',
    );
    this.logger.log(`demo workspace ${workspace.id} seeded`);
    return key;
  }
}
