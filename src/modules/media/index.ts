// Media's public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { MediaModule } from './media.module.js';
export * from './media.service.js';
export { MediaErrorCode, MediaNotFoundError } from './media-errors.js';
export { TaskMediaSweep, type ExpiredTaskMediaRows } from './task-media-sweep.js';
