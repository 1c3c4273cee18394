import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { Metrics } from '../../observability/metrics.service.js';
import { RealtimeConnections } from './realtime-connections.js';

/** What a turn led to (`svc_realtime_turns_total{outcome}`). */
export type TurnOutcome = 'completed' | 'failed' | 'unresolved' | 'replayed' | 'refused';

/** Realtime figures of this process (docs/realtime.md › Operations). */
@Injectable()
export class RealtimeMetrics implements OnModuleInit {
  readonly turns: Counter<'outcome'>;
  readonly firstAudioSeconds: Histogram;
  readonly closes: Counter<'code'>;

  constructor(
    private readonly metrics: Metrics,
    private readonly connections: RealtimeConnections,
  ) {
    const registers = [metrics.registry];
    this.turns = new Counter({
      name: 'svc_realtime_turns_total',
      help: 'Realtime turns by outcome: completed, failed, unresolved (left reconciling), replayed (a repeated turn id), refused (error frame, nothing created)',
      labelNames: ['outcome'],
      registers,
    });
    this.firstAudioSeconds = new Histogram({
      name: 'svc_realtime_first_audio_seconds',
      help: 'Time from a turn.commit frame to its first audio.delta frame',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    });
    this.closes = new Counter({ name: 'svc_realtime_closes_total', help: 'Realtime connections closed, by close code', labelNames: ['code'], registers });
  }

  onModuleInit(): void {
    this.metrics.gauge('svc_realtime_connections', 'Open realtime WebSocket connections of this process, by state (authenticating, ready)', ['state'], async (gauge) => {
      const counts = this.connections.counts();
      gauge.set({ state: 'authenticating' }, counts.authenticating);
      gauge.set({ state: 'ready' }, counts.ready);
    });
  }
}
