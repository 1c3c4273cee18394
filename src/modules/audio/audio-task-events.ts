import { Injectable } from '@nestjs/common';
import type { TransactionHandle } from '../../database/transaction.js';

/** What a task turning terminal tells its listeners (the webhook payload's `data`, plus the owner). */
export interface AudioTaskTerminalEvent {
  taskId: string;
  apiKeyId: string;
  workspaceId: string;
  webhookEndpointId: string | null;
  status: 'succeeded' | 'failed' | 'cancelled';
  model: string;
  usage: { inputCharacters: number; billableCharacters: number; chargedUsd: number };
}

/**
 * Called inside the transaction that makes the task terminal: write with `tx` (an outbox row) and
 * it commits with the status, or not at all. A listener that throws rolls the transition back; the
 * worker then retries the step. Keep listeners to database writes: no network calls.
 */
export type AudioTaskTerminalListener = (event: AudioTaskTerminalEvent, tx: TransactionHandle) => Promise<void>;

/**
 * The hook other domains (webhooks) use to react to an audio task turning terminal, without audio
 * importing them: they register in their own onModuleInit.
 */
@Injectable()
export class AudioTaskEvents {
  private readonly listeners: AudioTaskTerminalListener[] = [];

  onTerminal(listener: AudioTaskTerminalListener): void {
    this.listeners.push(listener);
  }

  async emitTerminal(event: AudioTaskTerminalEvent, tx: TransactionHandle): Promise<void> {
    for (const listener of this.listeners) await listener(event, tx);
  }
}
