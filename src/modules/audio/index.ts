// Audio's public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { AudioVoicesModule } from './voices/audio-voices.module.js';
export { VoiceResolver, type VoiceOwner } from './voices/voice-resolver.js';
