/**
 * What the gateway asks of the alternate video provider (DESIGN §1, §10; upstreams.md §3): a
 * synchronous create, queries by the upstream's task id and by our own id (`external_task_id`),
 * and the download of the finished MP4. Implemented by the live `kling` adapter and the sandbox.
 */
import type { ProviderAdapter } from '../capabilities.js';

/** The registry capability of alternate-provider adapters. */
export const ALTERNATE_VIDEO_CAPABILITY = 'alternate-video';
/** Public model ids (the price catalogue lists the same). */
export const ALTERNATE_VIDEO_MODEL_IDS = ['kling-v2-6', 'kling-v2-5-turbo'] as const;
/** The provider name shown in the alternate envelope's `error_params.provider`. */
export const ALTERNATE_PROVIDER_NAME = 'kling';

export type AlternateMode = 'std' | 'pro';
export type AlternateAspectRatio = '16:9' | '9:16' | '1:1';
/** Text-to-video, or image-to-video when an image or an end frame is given. */
export type AlternateKind = 'text2video' | 'image2video';
/** The upstream's `task_status` values. */
export type AlternateUpstreamStatus = 'submitted' | 'processing' | 'succeed' | 'failed';

/** Everything about a task an adapter needs after creation (serialisable, kept in the row). */
export interface AlternateJobSpec {
  /** Our task id (`alt:<uuid>`), sent as `external_task_id`. */
  taskId: string;
  model: string;
  kind: AlternateKind;
  prompt: string;
  durationSeconds: 5 | 10;
  aspectRatio: AlternateAspectRatio;
  mode: AlternateMode;
}

export interface AlternateCreateRequest extends AlternateJobSpec {
  negativePrompt?: string;
  /** Raw Base64 (no `data:` prefix) of the validated first frame. */
  imageBase64?: string;
  /** Raw Base64 of the validated end frame. */
  imageTailBase64?: string;
  /** Where the upstream posts status changes; absent when callbacks are off. */
  callbackUrl?: string;
}

/** One reading of the upstream task, from a query or a callback. */
export interface AlternateObservation {
  upstreamTaskId: string;
  externalTaskId: string | null;
  status: AlternateUpstreamStatus;
  /** The upstream's `task_status_msg`: logged, never shown to clients. */
  message?: string;
  videoUrl?: string;
  /** The upstream's own duration claim in seconds (diagnostic; we measure the file). */
  videoSeconds?: number;
}

export type AlternateCreateOutcome =
  | { kind: 'accepted'; upstreamTaskId: string }
  /** The upstream answered and did not create the task; `upstreamCode` is null when its answer carried none. */
  | { kind: 'refused'; upstreamCode: number | null; httpStatus: number }
  /** The request may have reached the upstream but its answer was lost: look it up, never resend. */
  | { kind: 'uncertain'; reason: string };

export type AlternateQueryOutcome =
  | { kind: 'found'; task: AlternateObservation }
  | { kind: 'not_found' }
  /** The query itself failed; the task may still be fine. */
  | { kind: 'error'; reason: string; retryable: boolean; retryAfterMs?: number };

export interface AlternateVideoProvider extends ProviderAdapter {
  create(request: AlternateCreateRequest): Promise<AlternateCreateOutcome>;
  query(spec: AlternateJobSpec, upstreamTaskId: string): Promise<AlternateQueryOutcome>;
  /** Finds the task created under our id after a lost create answer (never creates). */
  queryByExternalId(spec: AlternateJobSpec): Promise<AlternateQueryOutcome>;
  /** Writes the finished video to `destPath` (at most `maxBytes`). Throws AlternateDownloadError. */
  download(videoUrl: string, spec: AlternateJobSpec, destPath: string, maxBytes: number): Promise<{ bytes: number }>;
  /** When to poll next, given how many polls were made. */
  pollDelayMs(spec: AlternateJobSpec, pollAttempt: number, submittedAt: Date): number;
  /** How long to wait after a lost create answer before the first lookup. */
  readonly reconcileDelayMs: number;
  /** After this long without finding the task, it fails (released, never re-created). */
  readonly reconcileGiveUpMs: number;
}

export class AlternateDownloadError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'AlternateDownloadError';
  }
}

const STATUSES = new Set<string>(['submitted', 'processing', 'succeed', 'failed']);

/**
 * Reads the upstream's task object (the `data` of a query answer, or a callback body, which is
 * the bare task object) into an observation; null when it is not one.
 */
export function parseAlternateTask(value: unknown): AlternateObservation | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const task = value as Record<string, unknown>;
  const id = task.task_id;
  const status = task.task_status;
  // Kling sends ids as strings; a number is taken only while it is exact (a 19-digit id parsed as a JSON number is not).
  const usableId = (typeof id === 'string' && id !== '') || (typeof id === 'number' && Number.isSafeInteger(id));
  if (!usableId || typeof status !== 'string' || !STATUSES.has(status)) return null;
  const info = task.task_info as Record<string, unknown> | undefined;
  const external = info && typeof info === 'object' && typeof info.external_task_id === 'string' ? info.external_task_id : null;
  const observation: AlternateObservation = { upstreamTaskId: String(id), externalTaskId: external, status: status as AlternateUpstreamStatus };
  if (typeof task.task_status_msg === 'string') observation.message = task.task_status_msg.slice(0, 500);
  const result = task.task_result as { videos?: unknown } | undefined;
  const video = result && typeof result === 'object' && Array.isArray(result.videos) ? (result.videos[0] as Record<string, unknown> | undefined) : undefined;
  if (video && typeof video.url === 'string' && video.url !== '') observation.videoUrl = video.url;
  const seconds = video ? Number(video.duration) : NaN;
  if (Number.isFinite(seconds) && seconds > 0) observation.videoSeconds = seconds;
  return observation;
}
