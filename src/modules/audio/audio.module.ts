import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { QueueModule } from '../../queue/queue.module.js';
import { AdminModule } from '../admin/index.js';
import { BillingModule } from '../billing/billing.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { AudioAdaptersModule } from './audio-adapters.module.js';
import { AUDIO_QUEUE } from './audio-jobs.js';
import { AudioController, AudioListingController } from './audio.controller.js';
import { AudioProcessor } from './audio.processor.js';
import { AudioGenerationService } from './audio-generation.service.js';
import { AudioIdempotencyRepository } from './audio-idempotency.repository.js';
import { AudioSpeechController } from './audio-speech.controller.js';
import { AudioSpeechService } from './audio-speech.service.js';
import { AudioSpeechReplay } from './audio-speech-replay.js';
import { AudioRetention } from './audio-retention.js';
import { AudioIdempotencyEntity, AudioTaskEntity } from './audio-task.entity.js';
import { AudioTaskEvents } from './audio-task-events.js';
import { AudioTaskPresenter } from './audio-task.presenter.js';
import { AudioTaskRepository } from './audio-task.repository.js';
import { AudioTaskRunner } from './audio-task.runner.js';
import { AudioTaskService } from './audio-task.service.js';
import { AudioWorkSources } from './audio-work-sources.js';
import { AudioVoicesModule } from './voices/audio-voices.module.js';
import { NoWebhookEndpoints, WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE, WebhookEndpointDirectory } from './webhook-endpoint-directory.js';

/**
 * Audio generation tasks: creation (idempotent), the worker, retrieval and listing, estimate,
 * models, retention, and the platform registrations. Voices live in AudioVoicesModule; the
 * adapters in AudioAdaptersModule, found through the provider registry.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([AudioTaskEntity, AudioIdempotencyEntity]),
    QueueModule.forFeature({ queues: [AUDIO_QUEUE] }),
    // Realtime sessions' REST routes live under /v1/audio/realtime/ and carry `audio.` codes too
    // (DESIGN §4: 409 `audio.session_active`); their WebSocket frames carry their own codes.
    ErrorDomainsModule.forFeature({ domain: 'audio', pathPrefixes: ['/v1/audio/', '/api/svc/v1/audio/'] }),
    BillingModule,
    IdentityModule,
    ProvidersModule,
    AdminModule,
    AudioAdaptersModule,
    AudioVoicesModule,
  ],
  controllers: [AudioController, AudioListingController, AudioSpeechController],
  providers: [
    AudioTaskRepository,
    AudioIdempotencyRepository,
    AudioTaskPresenter,
    AudioGenerationService,
    AudioTaskService,
    AudioTaskRunner,
    AudioSpeechService,
    AudioSpeechReplay,
    AudioTaskEvents,
    AudioProcessor,
    AudioRetention,
    AudioWorkSources,
    {
      // Nothing matches until the webhooks domain provides its lookup from a global module.
      provide: WebhookEndpointDirectory,
      inject: [{ token: WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE, optional: true }],
      useFactory: (override?: WebhookEndpointDirectory) => override ?? new NoWebhookEndpoints(),
    },
  ],
  exports: [AudioGenerationService, AudioTaskService, AudioTaskRunner, AudioTaskEvents, AudioSpeechService],
})
export class AudioModule {}
