import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, ensureDatabaseExists } from './data-source-options.js';

/**
 * pg may emit a second 'error' on a connection whose query already failed (a killed backend: the
 * server's message, then the socket closing), after pg-pool has removed its own listener; an
 * 'error' nobody hears crashes the process. Every connection gets a listener of its own the first
 * time it is checked out, for its whole life (pg-pool still discards the broken connection).
 */
function keepConnectionErrorsHeard(dataSource: DataSource, logger: Logger): void {
  const pool = (dataSource.driver as unknown as { master?: EventEmitter }).master;
  const heard = new WeakSet<EventEmitter>();
  pool?.on('acquire', (connection: EventEmitter) => {
    if (heard.has(connection)) return;
    heard.add(connection);
    connection.on('error', (error: Error) => logger.warn(`database connection lost: ${error.message}`));
  });
}

/** PostgreSQL through TypeORM; committed migrations run on boot (never `synchronize`). */
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSourceOptions(config), autoLoadEntities: true }),
          dataSourceFactory: async (options) => {
            const logger = new Logger('Database');
            if (config.env.DATABASE_CREATE_IF_MISSING && (await ensureDatabaseExists(config.env.DATABASE_URL))) {
              logger.log('created the database named in DATABASE_URL');
            }
            const dataSource = await new DataSource(options!).initialize();
            keepConnectionErrorsHeard(dataSource, logger);
            if (config.env.DATABASE_RUN_MIGRATIONS) {
              const applied = await dataSource.runMigrations({ transaction: 'each' });
              if (applied.length) logger.log(`applied migrations: ${applied.map((m) => m.name).join(', ')}`);
            }
            return dataSource;
          },
        }),
      ],
    };
  }
}
