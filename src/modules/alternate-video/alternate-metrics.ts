import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Metrics } from '../../observability/metrics.service.js';

export type AlternateCreateLabel = 'accepted' | 'refused' | 'uncertain';
export type AlternateOutcomeLabel = 'succeeded' | 'failed';
export type AlternateCallbackLabel = 'applied' | 'unchanged' | 'duplicate' | 'unknown_task' | 'rejected';

/**
 * `svc_alternate_creates_total{model,outcome,upstream_code}`, `svc_alternate_tasks_total{model,outcome}`,
 * `svc_alternate_callbacks_total{result}` and `svc_alternate_transitions_total{source}` (which
 * path — poll, callback, create, lookup — applied a terminal result first).
 */
@Injectable()
export class AlternateMetrics {
  private readonly creates: Counter<'model' | 'outcome' | 'upstream_code'>;
  private readonly tasks: Counter<'model' | 'outcome'>;
  private readonly callbacks: Counter<'result'>;
  private readonly terminal: Counter<'source'>;

  constructor(metrics: Metrics) {
    const counter = <L extends string>(name: string, help: string, labelNames: L[]) => new Counter<L>({ name, help, labelNames, registers: [metrics.registry] });
    this.creates = counter('svc_alternate_creates_total', 'Alternate-provider creates, by model, outcome and upstream code', ['model', 'outcome', 'upstream_code']);
    this.tasks = counter('svc_alternate_tasks_total', 'Alternate-provider tasks that ended, by model and outcome', ['model', 'outcome']);
    this.callbacks = counter('svc_alternate_callbacks_total', 'Internal alternate-provider callbacks, by result', ['result']);
    this.terminal = counter('svc_alternate_terminal_first_total', 'Which path saw a terminal upstream result first', ['source']);
  }

  create(model: string, outcome: AlternateCreateLabel, upstreamCode: number | null = null): void {
    this.creates.inc({ model, outcome, upstream_code: upstreamCode === null ? '' : String(upstreamCode) });
  }

  ended(model: string, outcome: AlternateOutcomeLabel): void {
    this.tasks.inc({ model, outcome });
  }

  callback(result: AlternateCallbackLabel): void {
    this.callbacks.inc({ result });
  }

  terminalFirst(source: string): void {
    this.terminal.inc({ source });
  }
}
