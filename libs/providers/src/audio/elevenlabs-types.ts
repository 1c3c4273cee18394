/**
 * The parts of the ElevenLabs wire format (upstreams.md §2) the live audio adapter reads and
 * writes. Keys are snake_case as the upstream spells them; everything the upstream may omit is
 * optional, since its answers are read defensively.
 */

/** `POST /v1/text-to-speech/{voice_id}[/stream]` body. */
export interface ElevenLabsSpeechBody {
  text: string;
  model_id: string;
  language_code?: string;
  seed?: number;
  apply_text_normalization?: 'auto' | 'on' | 'off';
}

/** `POST /v1/text-to-dialogue` body. */
export interface ElevenLabsDialogueBody {
  inputs: Array<{ text: string; voice_id: string }>;
  model_id: string;
  language_code?: string;
  seed?: number;
  apply_text_normalization?: 'auto' | 'on' | 'off';
}

/** `{detail: {status, message}}`, or FastAPI's 422 list of field errors. */
export interface ElevenLabsErrorBody {
  detail?: ElevenLabsErrorDetail | ElevenLabsValidationItem[] | string;
}

export interface ElevenLabsErrorDetail {
  status?: string;
  message?: string;
  type?: string;
  code?: string;
}

export interface ElevenLabsValidationItem {
  loc?: Array<string | number>;
  msg?: string;
  type?: string;
}

/** One voice of `GET /v1/shared-voices`. */
export interface ElevenLabsSharedVoice {
  public_owner_id?: string;
  voice_id: string;
  name?: string;
  accent?: string;
  gender?: string;
  age?: string;
  descriptive?: string;
  use_case?: string;
  category?: string;
  language?: string;
  locale?: string;
  description?: string;
  preview_url?: string;
  rate?: number | null;
  fiat_rate?: number | null;
}

export interface ElevenLabsSharedVoicesPage {
  voices?: ElevenLabsSharedVoice[];
  has_more?: boolean;
  total_count?: number;
}

/** One voice of `GET /v2/voices` (the account's own and premade voices). */
export interface ElevenLabsVoice {
  voice_id: string;
  name?: string;
  category?: string;
  description?: string | null;
  preview_url?: string | null;
  labels?: Record<string, string>;
  is_owner?: boolean;
}

export interface ElevenLabsVoicesPage {
  voices?: ElevenLabsVoice[];
  has_more?: boolean;
  total_count?: number;
  next_page_token?: string | null;
}
