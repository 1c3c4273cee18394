import { DomainError } from '../../../libs/common/index.js';

/** Every error code of the image routes (DESIGN §4 and §10: all `image.`; refusals are 400 before any hold). */
export enum ImageErrorCode {
  InvalidField = 'image.invalid_field',
  UnknownField = 'image.unknown_field',
  UnknownModel = 'image.unknown_model',
  /** `controls.size` not offered by the model (lite: 1K only; pro: no 512). */
  UnsupportedSize = 'image.unsupported_size',
  /** `controls.aspectRatio` not offered by the model (9:21 on pro and flash only). */
  UnsupportedAspectRatio = 'image.unsupported_aspect_ratio',
  /** Neither a prompt nor a reference image. */
  PromptRequired = 'image.prompt_required',
  PromptTooLong = 'image.prompt_too_long',
  /** More than one candidate asked for in `generationConfig`. */
  UnsupportedCandidateCount = 'image.unsupported_candidate_count',
  /** A reference that is not an HTTPS URL or Base64 image data, raw or as a data URL (raw `gs://` included), or malformed Base64. */
  InvalidReference = 'image.invalid_reference',
  /** A reference whose bytes are not PNG, JPEG, WebP, HEIC or HEIF (checked by magic bytes). */
  UnsupportedReferenceFormat = 'image.unsupported_reference_format',
  /** A reference URL that could not be fetched (HTTP error, refused address, too big, timeout). */
  ReferenceFetchFailed = 'image.reference_fetch_failed',
  /** The references together are over the per-request cap. */
  ReferencesTooLarge = 'image.references_too_large',
  /** The upstream refused the request for safety reasons: nothing is charged. */
  ContentRefused = 'image.content_refused',
  /** The upstream answered without an image (text only, NO_IMAGE): nothing is charged. */
  NoImage = 'image.no_image',
  /** The upstream failed for good (or the sandbox was told to): nothing is charged. */
  UpstreamFailed = 'image.upstream_failed',
  /** The upstream failed in a way worth retrying as is (429, 5xx, timeout): nothing is charged. */
  UpstreamUnavailable = 'image.upstream_unavailable',
  /** No upstream may serve the model for this key, or it is known to be down. */
  Unavailable = 'image.unavailable',
}

export const imageInvalid = (code: ImageErrorCode, message: string): DomainError => new DomainError(400, code, message);

/** Which reference a refusal is about, as the client wrote its list (zero-based, like field paths). */
export const referenceLabel = (index: number): string => `assets.referenceImages.${index}`;
