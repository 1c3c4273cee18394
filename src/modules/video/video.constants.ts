/** Signed video links live at most this long (spec: under one hour). */
export const VIDEO_LINK_TTL_SECONDS = 3600;
/** Videos are kept seven days after completion (spec). */
export const VIDEO_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** The subject type of a video task's hold. */
export const HOLD_SUBJECT = 'video_task';

