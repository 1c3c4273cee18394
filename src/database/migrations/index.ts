import { Platform1763800000000 } from './1763800000000-platform.js';
import { Video1763800000100 } from './1763800000100-video.js';

/** Every migration, in order. A new one is appended here (explicit: no glob loading in ESM). */
export const MIGRATIONS = [Platform1763800000000, Video1763800000100];
