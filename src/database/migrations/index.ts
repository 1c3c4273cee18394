import { Platform1763800000000 } from './1763800000000-platform.js';
import { Video1763800000100 } from './1763800000100-video.js';
import { WalletBatch1763800000200 } from './1763800000200-wallet-batch.js';
import { OpenHoldAge1763800000300 } from './1763800000300-open-hold-age.js';
import { HotPathForeignKeys1763800000400 } from './1763800000400-hot-path-foreign-keys.js';
import { SetBasedResolutions1763800000500 } from './1763800000500-set-based-resolutions.js';
import { ChargeWithinHold1763800000600 } from './1763800000600-charge-within-hold.js';
import { Audio1763800000700 } from './1763800000700-audio.js';
import { SavedVoices1763800000800 } from './1763800000800-saved-voices.js';
import { AudioSpeechStream1763800000850 } from './1763800000850-audio-speech-stream.js';
import { WebhookEndpoints1763800000900 } from './1763800000900-webhook-endpoints.js';
import { WebhookDeliveries1763800000950 } from './1763800000950-webhook-deliveries.js';
import { Images1763800001000 } from './1763800001000-images.js';
import { AlternateVideo1763800001100 } from './1763800001100-alternate-video.js';
import { LedgerSubject1763800001200 } from './1763800001200-ledger-subject.js';
import { Realtime1763800001300 } from './1763800001300-realtime.js';
import { LostHolds1763800001400 } from './1763800001400-lost-holds.js';
import { PlannerProofWallet1763800001500 } from './1763800001500-planner-proof-wallet.js';
import { AudioPendingCount1763800001600 } from './1763800001600-audio-pending-count.js';
import { CreationForeignKeys1763800001700 } from './1763800001700-creation-foreign-keys.js';

/** Every migration, in order. A new one is appended here (explicit: no glob loading in ESM). */
export const MIGRATIONS = [
  Platform1763800000000,
  Video1763800000100,
  WalletBatch1763800000200,
  OpenHoldAge1763800000300,
  HotPathForeignKeys1763800000400,
  SetBasedResolutions1763800000500,
  ChargeWithinHold1763800000600,
  Audio1763800000700,
  SavedVoices1763800000800,
  AudioSpeechStream1763800000850,
  WebhookEndpoints1763800000900,
  WebhookDeliveries1763800000950,
  Images1763800001000,
  AlternateVideo1763800001100,
  LedgerSubject1763800001200,
  Realtime1763800001300,
  LostHolds1763800001400,
  PlannerProofWallet1763800001500,
  AudioPendingCount1763800001600,
  CreationForeignKeys1763800001700,
];
