import { type DynamicModule, Global, Module } from '@nestjs/common';
import { Clock } from '../../libs/common/index.js';
import { AppConfig } from './app-config.js';

/** Makes the validated AppConfig and the clock injectable everywhere (tests pass a ManualClock): global, every module reads them. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, clock: Clock = new Clock()): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: Clock, useValue: clock },
      ],
      exports: [AppConfig, Clock],
    };
  }
}
