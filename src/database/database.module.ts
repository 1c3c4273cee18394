import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, ensureDatabaseExists } from './data-source-options.js';

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
