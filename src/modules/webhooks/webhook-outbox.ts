import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntitySubscriberInterface, QueryRunner, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';
import { Clock, newId } from '../../../libs/common/index.js';
import { entityManagerOf, type TransactionHandle } from '../../database/transaction.js';
import { type AudioTaskTerminalEvent, AudioTaskEvents } from '../audio/index.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { WebhookDeliveryJobs } from './webhook-delivery-jobs.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import type { WebhookEventType } from './webhook-events.js';

/**
 * The outbox: when an audio task turns `succeeded` or `failed` (AudioTaskEvents, inside the
 * transaction that makes it terminal), and its endpoint is enabled and subscribed to that type, one
 * event (its payload frozen now) and one pending delivery are written with the same `tx` — they
 * commit with the task's status or not at all. The job is enqueued once that transaction commits
 * (a TypeORM commit subscriber); an enqueue lost there is made good by the reconciler.
 */
@Injectable()
export class WebhookOutbox implements OnModuleInit, EntitySubscriberInterface {
  private readonly logger = new Logger(WebhookOutbox.name);
  /** Deliveries written in a still-open transaction, by its query runner. */
  private readonly uncommitted = new WeakMap<QueryRunner, Array<{ deliveryId: string; endpointId: string }>>();

  constructor(
    private readonly events: AudioTaskEvents,
    private readonly endpoints: WebhookEndpointsService,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly jobs: WebhookDeliveryJobs,
    private readonly clock: Clock,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  onModuleInit(): void {
    this.db.subscribers.push(this);
    this.events.onTerminal((event, tx) => this.record(event, tx));
  }

  async record(event: AudioTaskTerminalEvent, tx: TransactionHandle): Promise<void> {
    if (event.webhookEndpointId === null || event.status === 'cancelled') return;
    const type: WebhookEventType = `audio.generation.${event.status}`;
    const endpoint = await this.endpoints.findForEvent(event.webhookEndpointId, tx);
    if (!endpoint || !endpoint.enabled || endpoint.apiKeyId !== event.apiKeyId || !endpoint.events.includes(type)) return;
    const at = this.clock.now();
    const eventId = newId('event');
    const deliveryId = newId('delivery');
    const payload = JSON.stringify({
      id: eventId,
      type,
      createdAt: at.toISOString(),
      data: { taskId: event.taskId, model: event.model, status: event.status, usage: event.usage },
    });
    const written = await this.deliveries.insertOutbox(tx, { eventId, deliveryId, type, taskId: event.taskId, endpointId: endpoint.id, apiKeyId: event.apiKeyId, payload, at });
    if (!written) return;
    const runner = entityManagerOf(tx).queryRunner;
    if (runner) this.uncommitted.set(runner, [...(this.uncommitted.get(runner) ?? []), { deliveryId, endpointId: endpoint.id }]);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    // A savepoint's release is announced as a commit too: wait for the outermost one.
    if (!event.queryRunner || event.queryRunner.isTransactionActive) return;
    const written = this.uncommitted.get(event.queryRunner);
    if (!written) return;
    this.uncommitted.delete(event.queryRunner);
    // Not awaited: the commit is done; a failed enqueue is the reconciler's to repair.
    for (const { deliveryId, endpointId } of written) {
      void this.jobs.enqueue(deliveryId, endpointId).catch((err: Error) => this.logger.warn(`enqueue of ${deliveryId} failed (the reconciler will retry): ${err.message}`));
    }
  }

  /** Any rollback (a savepoint's too) forgets the transaction's deliveries: a lost enqueue is the reconciler's, a phantom one would be worse. */
  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (event.queryRunner) this.uncommitted.delete(event.queryRunner);
  }
}
