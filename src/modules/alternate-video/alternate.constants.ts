/** Signed video links live at most this long (as omni video: under one hour). */
export const ALTERNATE_LINK_TTL_SECONDS = 3600;
/** Videos are kept seven days after completion (as omni video). */
export const ALTERNATE_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** The subject type of an alternate task's hold. */
export const ALTERNATE_HOLD_SUBJECT = 'alternate_task';
/** The largest video downloaded from the upstream. */
export const ALTERNATE_MAX_VIDEO_BYTES = 512 * 1024 * 1024;
/** The internal callback route (DESIGN §4); also the `callback_url` sent upstream, under PUBLIC_BASE_URL. */
export const ALTERNATE_CALLBACK_PATH = '/internal/alternate/callbacks';
/** Body limit of the callback route: a task object is a few hundred bytes. */
export const ALTERNATE_CALLBACK_BODY_LIMIT = 64 * 1024;
