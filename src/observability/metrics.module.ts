import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics.service.js';

/**
 * Global on purpose: every module may count and time what it does (like config and the clock),
 * and the registry must be one per app so /metrics shows every module's figures.
 */
@Global()
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
