import type { JobsOptions } from 'bullmq';

/** Signed audio links live at most this long (DESIGN §6: audio links ≤ 1 h). */
export const AUDIO_LINK_TTL_SECONDS = 3600;
/** Audio is kept seven days after completion (spec › Limits). */
export const AUDIO_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** The stored object outlives the task's retention deadline by this much (the sweep removes both). */
export const AUDIO_MEDIA_EXPIRY_MARGIN_MS = 3600 * 1000;
/** The subject type of an audio task's hold. */
export const AUDIO_HOLD_SUBJECT = 'audio_task';
/** Idempotency records are kept at least this long (DESIGN §6), then swept. */
export const AUDIO_IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** How often expired idempotency records are swept. */
export const AUDIO_IDEMPOTENCY_SWEEP_INTERVAL_MS = 3600 * 1000;
/** Text of one request: prompt or the sum of the dialogue lines (spec › Limits). */
export const AUDIO_MAX_TEXT_CHARACTERS = 2000;
export const AUDIO_MAX_DIALOGUE_ENTRIES = 100;
export const AUDIO_MAX_DIALOGUE_VOICES = 10;
export const AUDIO_MAX_SEED = 4_294_967_295;

/** Deterministic job id: enqueueing a task twice is a no-op. */
export const audioJobId = (taskId: string): string => `audio:${taskId}`;
/** A run that throws (database or Redis hiccup) is retried by BullMQ; the reconciler re-enqueues with the same options. */
export const AUDIO_JOB_OPTIONS = { attempts: 8, backoff: { type: 'exponential', delay: 1000 } } as const satisfies JobsOptions;

/**
 * Where an idempotency key applies: creation and streaming speech are separate scopes (spec).
 * Also the task's origin: `realtime` for the turns of realtime sessions (never with an idempotency key:
 * the session's turn id plays that part, docs/realtime.md).
 */
export type AudioEndpoint = 'generations' | 'speech' | 'realtime';

/**
 * Streaming speech bounds the audio it buffers (for storage) by the longest speech a 2,000-character
 * text can make: a quarter second a character is slower than any voice speaks, even with pauses.
 */
export const AUDIO_STREAM_MAX_SECONDS = AUDIO_MAX_TEXT_CHARACTERS / 4;
/** A stream still running after this long is given up (the upstream's own stall timeouts come first). */
export const AUDIO_STREAM_MAX_MS = 15 * 60_000;
