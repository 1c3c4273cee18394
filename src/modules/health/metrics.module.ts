import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics.service.js';

@Global()
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
