/** Public links of generated images live this long after generation (spec › Limits). */
export const IMAGE_LINK_RETENTION_MS = 24 * 3600 * 1000;
/** Reference images per request (spec › Limits). */
export const IMAGE_MAX_REFERENCES = 14;
/** Longest prompt, in characters (our bound; the spec names none). */
export const IMAGE_MAX_PROMPT_CHARACTERS = 10_000;
/** Largest reference image, decoded (our bound; the upstream's inline request limit is about 20 MB). */
export const IMAGE_MAX_REFERENCE_BYTES = 7 * 1024 * 1024;
/** Largest sum of the reference images of one request, decoded. */
export const IMAGE_MAX_REFERENCES_TOTAL_BYTES = 20 * 1024 * 1024;
/** Whole-exchange timeout of one reference fetch. */
export const IMAGE_REFERENCE_FETCH_TIMEOUT_MS = 15_000;
/** The subject type of an image generation's hold. */
export const IMAGE_HOLD_SUBJECT = 'image_generation';
/** A generation still `running` this long after creation was left by a process that died mid-request. */
export const IMAGE_ABANDONED_AFTER_MS = 30 * 60_000;
/** How often expired image media and abandoned generations are swept. */
export const IMAGE_SWEEP_INTERVAL_MS = 10 * 60_000;
export const IMAGE_ROUTE_PREFIX = '/api/svc/v1/images/';
