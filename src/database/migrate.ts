import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, ensureDatabaseExists } from './data-source-options.js';

/** `npm run migration:run`: applies pending migrations and exits. */
async function main(): Promise<void> {
  const config = AppConfig.fromProcess();
  if (config.env.DATABASE_CREATE_IF_MISSING) await ensureDatabaseExists(config.env.DATABASE_URL);
  const dataSource = await new DataSource(dataSourceOptions(config)).initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    console.log(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')}` : 'no pending migrations');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
