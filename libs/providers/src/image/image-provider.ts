/**
 * What the gateway asks of an image upstream (spec › Image generation): one synchronous
 * generation of exactly one image from a prompt and/or reference images. Implemented by the live
 * `gemini-image` adapter (Gemini `generateContent` with inline image parts, upstreams.md §1.13)
 * and by the sandbox; registered under the capability `image`.
 */
import type { ProviderAdapter } from '../capabilities.js';

export const IMAGE_CAPABILITY = 'image';

/** The public model ids of the image API. */
export const IMAGE_MODEL_IDS = ['vendor-3-pro-image', 'vendor-3.1-flash-image', 'vendor-3.1-flash-lite-image'] as const;
export type ImageModelId = (typeof IMAGE_MODEL_IDS)[number];

export type ImageSizeName = '512' | '1K' | '2K' | '4K';

export const IMAGE_ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9', '1:4', '4:1', '1:8', '8:1', '9:21'] as const;
export type ImageAspectRatio = (typeof IMAGE_ASPECT_RATIOS)[number];

/** A validated reference image: its bytes (fetched or decoded by the gateway) and its sniffed type. */
export interface ReferenceImage {
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/heic' | 'image/heif';
  bytes: Buffer;
}

export interface ImageGenerationRequest {
  /** Our id (`image:<uuid>`). */
  generationId: string;
  model: ImageModelId;
  prompt?: string;
  references: ReferenceImage[];
  size: ImageSizeName;
  /**
   * Absent only for an edit whose client named no ratio: the picture follows the references, as
   * the upstream does by default (`imageConfig` without `aspectRatio`).
   */
  aspectRatio?: ImageAspectRatio;
  /** Sampling settings only (validated by the domain), forwarded as Gemini `generationConfig` fields. */
  generationConfig?: Record<string, unknown>;
  /** Forwarded as Gemini `safetySettings`. */
  safetySettings?: unknown[];
  /** Aborting cancels the upstream call. */
  signal?: AbortSignal;
}

export interface GeneratedImage {
  mimeType: string;
  bytes: Buffer;
}

export type ImageOutcome =
  /** One image (the first the upstream returned), any text it said, and its reported token usage. */
  | { kind: 'succeeded'; image: GeneratedImage; text?: string; usage?: { inputTokens?: number; outputTokens?: number } }
  /**
   * The upstream answered without an image: `safety` (IMAGE_SAFETY, PROHIBITED_CONTENT, a blocked
   * prompt), `no_image` (NO_IMAGE, text only, IMAGE_OTHER, IMAGE_RECITATION). Nothing is charged.
   */
  | { kind: 'refused'; category: 'safety' | 'no_image'; reason: string }
  /** The call failed (HTTP error, network, timeout): `retryable` says whether the client may retry as is. */
  | { kind: 'failed'; reason: string; retryable: boolean; retryAfterSeconds?: number; status?: number };

export interface ImageProvider extends ProviderAdapter {
  /** False while the upstream is known to be unusable (circuit open): generation answers 503. */
  available(): boolean;
  generate(request: ImageGenerationRequest): Promise<ImageOutcome>;
}
