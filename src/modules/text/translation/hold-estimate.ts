import { mp4DurationSeconds, type GeminiPart, type GeminiRequest } from '../../../../libs/providers/index.js';
import { isObject } from './json-readers.js';

/**
 * Every text model's input window in tokens: the upstream refuses a longer prompt, so no request,
 * however many of its media parts cannot be measured, is billed for more input than this.
 */
export const INPUT_WINDOW_TOKENS = 1_048_576;
/** Tokens of one video frame at most: Gemini 3 counts 280 at the high media resolution (70 below), Gemini 2.5 258. */
const TOKENS_PER_FRAME = 300;
/** Tokens of one second of sound (an audio file, or a video's soundtrack). */
const TOKENS_PER_AUDIO_SECOND = 32;
/** The lowest bitrate an audio file is taken to have (Opus's floor, 6 kbps): the most seconds its bytes can hold. */
const AUDIO_MIN_BYTES_PER_SECOND = 750;
/** An image at most (Gemini 3's high media resolution); a large file is taken at one token per 64 bytes. */
const TOKENS_PER_IMAGE = 1120;

const TEXT_TYPES = /^(?:text\/|application\/(?:json|xml|x-ndjson|csv|javascript|x-python|x-sh|sql|yaml|x-yaml)\b)/;

/**
 * Input tokens the request can be billed for at most, for the wallet hold (DESIGN §6: the hold
 * is the most the request can cost). Settlement uses the upstream's own counts; this only has
 * to be at least as large:
 * - text, object keys included: one token per UTF-8 byte (a tokenizer with byte fallback never
 *   makes a token of less than a byte) plus one per key and per array item for the template;
 * - an image: 1,120 tokens, or one per 64 bytes when larger;
 * - a video: its MP4 duration at the part's `fps` (1 by default) times 300 tokens a frame, plus
 *   32 a second of sound; a video whose duration cannot be read (not MP4) counts as the whole
 *   input window;
 * - an audio file: 32 tokens a second for as many seconds as its bytes hold at 6 kbps;
 * - a text file (`text/*`, JSON, CSV, …): one token per byte;
 * - anything else (PDF, other documents, a link left unfetched): the whole input window;
 * and the request as a whole at most the input window.
 */
export function estimateInputTokens(request: GeminiRequest): number {
  let tokens = 8;
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      tokens += Buffer.byteLength(value, 'utf8');
      return;
    }
    if (Array.isArray(value)) {
      tokens += value.length;
      for (const item of value) visit(item);
      return;
    }
    if (!isObject(value)) return;
    if (isObject(value.inlineData) || isObject(value.fileData)) {
      tokens += mediaTokens(value as GeminiPart);
      return;
    }
    for (const key in value) {
      if (key === 'thoughtSignature') continue;
      tokens += Buffer.byteLength(key, 'utf8') + 1;
      visit(value[key]);
    }
  };
  visit(request.contents);
  visit(request.systemInstruction);
  visit(request.tools);
  // The upstream refuses a prompt longer than its window: however many parts could not be measured, no more is billed.
  return Math.min(tokens, INPUT_WINDOW_TOKENS);
}

/** The most tokens one media part can be billed for (see estimateInputTokens). */
function mediaTokens(part: GeminiPart): number {
  const inline = part.inlineData;
  if (!inline || typeof inline.data !== 'string') return INPUT_WINDOW_TOKENS;
  const mimeType = typeof inline.mimeType === 'string' ? inline.mimeType.toLowerCase() : '';
  const data = inline.data;
  const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
  if (mimeType.startsWith('image/')) return Math.max(TOKENS_PER_IMAGE, Math.ceil(bytes / 64));
  if (mimeType.startsWith('audio/')) return Math.min(INPUT_WINDOW_TOKENS, Math.ceil(bytes / AUDIO_MIN_BYTES_PER_SECOND) * TOKENS_PER_AUDIO_SECOND);
  if (TEXT_TYPES.test(mimeType)) return Math.max(1, bytes);
  if (mimeType.startsWith('video/')) {
    const seconds = mp4DurationSeconds(Buffer.from(data, 'base64'));
    if (seconds === null || !Number.isFinite(seconds)) return INPUT_WINDOW_TOKENS;
    const fps = typeof part.videoMetadata?.fps === 'number' && part.videoMetadata.fps > 0 ? part.videoMetadata.fps : 1;
    const frames = Math.floor(seconds * fps) + 1;
    return Math.min(INPUT_WINDOW_TOKENS, frames * TOKENS_PER_FRAME + Math.ceil(seconds) * TOKENS_PER_AUDIO_SECOND);
  }
  return INPUT_WINDOW_TOKENS;
}
