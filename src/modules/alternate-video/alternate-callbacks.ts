import { Injectable, Logger } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Clock, isIdOf } from '../../../libs/common/index.js';
import { parseAlternateTask } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import { AlternateError, AlternateErrorCode } from './alternate-errors.js';
import { AlternateMetrics } from './alternate-metrics.js';
import { AlternateTaskProgress } from './alternate-task.progress.js';
import { AlternateTaskRepository } from './alternate-task.repository.js';

/**
 * The secrets internal callbacks are signed with (DESIGN §10): `ALTERNATE_CALLBACK_SECRETS`,
 * comma-separated `whsec_` secrets, all accepted (rotation); the first is the one the sandbox
 * signs with. Unset, one secret is derived from SECRETS_ENCRYPTION_KEY, so that every process of a
 * deployment (API and workers) agrees on it and the sandbox's callbacks work out of the box.
 */
export function callbackSecrets(config: AppConfig): string[] {
  const configured = config.env.ALTERNATE_CALLBACK_SECRETS?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  if (configured.length > 0) return configured;
  const derived = createHmac('sha256', Buffer.from(config.env.SECRETS_ENCRYPTION_KEY, 'base64')).update('alternate-callbacks').digest('base64');
  return [`whsec_${derived}`];
}

export type CallbackResult = 'applied' | 'unchanged' | 'duplicate' | 'unknown_task';

/**
 * `POST /internal/alternate/callbacks` (spec, Authentication 5; Events › Video and alternate
 * provider). The exact raw body is verified with the `standardwebhooks` package against every
 * configured secret: `webhook-id`, `webhook-timestamp` (five minutes either way), and
 * `webhook-signature` with one or more space-separated `v1,` signatures. A bad or missing
 * signature or a stale timestamp is a 401 and changes nothing. A verified callback is answered 200
 * whatever it changes: a replayed `webhook-id`, an unknown task, a duplicate or late status all
 * change nothing; otherwise the task object goes through the same transition as a poll.
 */
@Injectable()
export class AlternateCallbackHandler {
  private readonly logger = new Logger(AlternateCallbackHandler.name);
  private readonly verifiers: Webhook[];

  constructor(
    config: AppConfig,
    private readonly tasks: AlternateTaskRepository,
    private readonly progress: AlternateTaskProgress,
    private readonly metrics: AlternateMetrics,
    private readonly clock: Clock,
  ) {
    this.verifiers = callbackSecrets(config).map((secret, index) => {
      try {
        return new Webhook(secret);
      } catch {
        throw new Error(`ALTERNATE_CALLBACK_SECRETS: secret ${index + 1} is not whsec_ followed by base64`);
      }
    });
  }

  async handle(rawBody: unknown, headers: Record<string, string | string[] | undefined>): Promise<CallbackResult> {
    const body = typeof rawBody === 'string' ? rawBody : '';
    const single = (name: string): string => {
      const value = headers[name];
      return typeof value === 'string' ? value : '';
    };
    const signed = { 'webhook-id': single('webhook-id'), 'webhook-timestamp': single('webhook-timestamp'), 'webhook-signature': single('webhook-signature') };
    if (!this.verifies(body, signed)) {
      this.metrics.callback('rejected');
      throw new AlternateError(401, AlternateErrorCode.InvalidSignature, 'the callback signature is missing or invalid, or its timestamp is outside five minutes');
    }
    const webhookId = signed['webhook-id'];
    if (await this.tasks.callbackSeen(webhookId)) return this.count('duplicate');
    let payload: unknown = null;
    try {
      payload = JSON.parse(body);
    } catch {
      this.logger.warn(`callback ${webhookId}: signed but not JSON; ignored`);
    }
    const seen = parseAlternateTask(payload);
    const taskId = seen?.externalTaskId && isIdOf('alt', seen.externalTaskId) ? seen.externalTaskId : null;
    const task = taskId ? await this.tasks.findById(taskId) : null;
    if (!seen || !task) {
      await this.tasks.recordCallback(webhookId, null, this.clock.now());
      return this.count('unknown_task');
    }
    const changed = await this.progress.observe(task, seen, 'callback');
    await this.tasks.recordCallback(webhookId, task.id, this.clock.now());
    return this.count(changed ? 'applied' : 'unchanged');
  }

  private verifies(body: string, headers: Record<string, string>): boolean {
    if (!headers['webhook-id'] || !headers['webhook-timestamp'] || !headers['webhook-signature']) return false;
    return this.verifiers.some((verifier) => {
      try {
        verifier.verify(body, headers, { jsonParse: false });
        return true;
      } catch {
        return false;
      }
    });
  }

  private count(result: CallbackResult): CallbackResult {
    this.metrics.callback(result);
    return result;
  }
}
