// Realtime's public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { RealtimeModule } from './realtime.module.js';
