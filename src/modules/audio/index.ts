// Audio's public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { AudioModule } from './audio.module.js';
export { type AudioCreation, AudioGenerationService, type CreateAudioOptions } from './audio-generation.service.js';
export { AudioTaskService } from './audio-task.service.js';
export { AudioSpeechService, type SpeechSink, type StreamEnd } from './audio-speech.service.js';
export { AudioTaskRunner, audioMediaKey, speechSpecOf } from './audio-task.runner.js';
export { type AudioTaskTerminalEvent, AudioTaskEvents, type AudioTaskTerminalListener } from './audio-task-events.js';
export { WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE, WebhookEndpointDirectory } from './webhook-endpoint-directory.js';
export { AudioErrorCode } from './audio-errors.js';
export { parseIdempotencyKey } from './audio-idempotency.js';
export { AudioTaskResponseDto } from './audio-task.resource.js';
export { CreateSpeechDto } from './dto/create-audio-generation.dto.js';
export { AudioVoicesModule } from './voices/audio-voices.module.js';
export { VoiceResolver, type VoiceOwner } from './voices/voice-resolver.js';
