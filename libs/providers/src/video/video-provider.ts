/**
 * What the gateway asks of a video upstream (DESIGN §1): submit one long-running generation,
 * look it up again when the acceptance answer was lost, poll it, and download its MP4.
 * Implemented by the live `gemini-video` adapter and by the sandbox.
 */
import type { ProviderAdapter } from '../capabilities.js';

/** The public model ids of the omni video API. */
export const VIDEO_MODEL_IDS = ['vendor-omni-1.1-flash-preview', 'vendor-omni-flash-preview'] as const;

export type VideoMode =
  | 'text_to_video'
  | 'image_first_frame'
  | 'image_first_last_frame'
  | 'multimodal_reference'
  | 'video_extend'
  | 'video_modify';

export type VideoResolutionName = '360p' | '720p' | '1080p' | '4k';
export type VideoRatio = '16:9' | '9:16';

export type AssetRole = 'firstFrameImage' | 'lastFrameImage' | 'referenceImage' | 'sourceVideo' | 'referenceVideo';

/** One validated input: `bytes` is present for media fetched over HTTPS, absent for `gs://`. */
export interface PreparedAsset {
  role: AssetRole;
  uri: string;
  mimeType: string;
  bytes?: Buffer;
}

/** Everything about a generation except its media bytes: safe to keep in a row or a job. */
export interface VideoJobSpec {
  taskId: string;
  /** Public model id (`vendor-omni-…`); each adapter maps it to its upstream model. */
  model: string;
  mode: VideoMode;
  prompt: string;
  durationSeconds: number;
  resolution: VideoResolutionName;
  ratio: VideoRatio;
}

export interface VideoGenerationRequest extends VideoJobSpec {
  assets: PreparedAsset[];
}

export type SubmitOutcome =
  /** The upstream accepted the job; `operation` names it for polling. */
  | { kind: 'accepted'; operation: string }
  /** The upstream answered and did not accept; `retryable` says whether sending again is safe and useful. */
  | { kind: 'rejected'; reason: string; retryable: boolean; retryAfterMs?: number }
  /** The request may have reached the upstream but its answer was lost: look it up, never resend. */
  | { kind: 'uncertain'; reason: string };

export type LookupOutcome =
  | { kind: 'found'; operation: string }
  /** The upstream cannot say (yet) whether it accepted the job. */
  | { kind: 'unknown'; retryAfterMs?: number };

/** Where the finished video can be fetched from (serialisable). */
export interface VideoOutputRef {
  uri?: string;
  base64?: string;
  mimeType?: string;
}

export type PollOutcome =
  | { kind: 'running'; retryAfterMs?: number }
  | { kind: 'succeeded'; output: VideoOutputRef }
  /** The generation ended without a video (refusal, upstream error); a clean reason for the client. */
  | { kind: 'failed'; reason: string }
  /** The poll itself failed; the operation may still be fine. */
  | { kind: 'error'; reason: string; retryable: boolean; retryAfterMs?: number };

export interface VideoProvider extends ProviderAdapter {
  /** False while the upstream is known to be unusable (circuit open, missing binary): creation answers 503. */
  available(): boolean;
  submit(request: VideoGenerationRequest): Promise<SubmitOutcome>;
  /** Finds the job of `spec.taskId` after an uncertain submit (never resubmits). */
  lookup(spec: VideoJobSpec, submittedAt: Date): Promise<LookupOutcome>;
  poll(operation: string, spec: VideoJobSpec, pollAttempt: number): Promise<PollOutcome>;
  /** Writes the finished video to `destPath`; returns its size. Throws VideoDownloadError. */
  download(output: VideoOutputRef, spec: VideoJobSpec, destPath: string): Promise<{ bytes: number }>;
  /** How long to wait after an uncertain submit before the first lookup. */
  readonly reconcileDelayMs: number;
  /** After this long without finding an uncertain job, the task fails (released, never resent). */
  readonly reconcileGiveUpMs: number;
}

export class VideoDownloadError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'VideoDownloadError';
  }
}

/** Output frame size for a resolution and ratio (9:16 swaps width and height). */
export function frameSize(resolution: VideoResolutionName, ratio: VideoRatio): { width: number; height: number } {
  const landscape = { '360p': [640, 360], '720p': [1280, 720], '1080p': [1920, 1080], '4k': [3840, 2160] }[resolution] as [number, number];
  return ratio === '9:16' ? { width: landscape[1], height: landscape[0] } : { width: landscape[0], height: landscape[1] };
}
