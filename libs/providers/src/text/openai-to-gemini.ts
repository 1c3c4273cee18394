/**
 * Validation and translation of both text operations' requests (Chat-Completions-style and
 * Responses-style) into one Gemini `generateContent` request. Pure: no I/O. HTTPS media links
 * become `fileData` parts that the service fetches through the guarded client before the call
 * (see `pendingMediaUrls`). Every refusal is a DomainError thrown before any wallet hold.
 */
import { DomainError } from '../../../common/index.js';
import type {
  GeminiContent,
  GeminiFunctionDeclaration,
  GeminiFunctionResponse,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiRequest,
  GeminiTool,
  TextModelId,
} from './gemini-types.js';
import { isTextModel, MAX_OUTPUT_TOKENS, TEXT_MODEL_IDS } from './gemini-types.js';
import { checkBodyDepth, checkDeclarationCount, checkSchemaLimits } from './schema-limits.js';
import { invalid, TextErrorCode, unsupported } from './text-errors.js';

export type TextOperation = 'chat' | 'responses';

export interface TranslatedTextRequest {
  operation: TextOperation;
  model: TextModelId;
  stream: boolean;
  /** Chat: `stream_options.include_usage`. */
  includeUsage: boolean;
  gemini: GeminiRequest;
  /** The output cap the wallet hold covers. */
  maxOutputTokens: number;
  /** Responses-style: request fields echoed on the response object. */
  echo: Record<string, unknown>;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

type ReasoningLevel = 'minimal' | 'low' | 'medium' | 'high';

/** Model rules of the spec (both operations). */
export const MODEL_RULES: Record<TextModelId, { levels: ReasoningLevel[]; defaultLevel: ReasoningLevel; lite: boolean; thinkingBudget: boolean }> = {
  'vendor-3.8-flash': { levels: ['low', 'medium', 'high'], defaultLevel: 'medium', lite: false, thinkingBudget: false },
  'vendor-3.7-flash': { levels: ['low', 'medium', 'high'], defaultLevel: 'medium', lite: false, thinkingBudget: true },
  'vendor-3.5-flash-lite': { levels: ['minimal', 'low', 'medium', 'high'], defaultLevel: 'minimal', lite: true, thinkingBudget: true },
};

const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

// ---------------------------------------------------------------------------------------------
// Small typed readers

function optNumber(body: Json, key: string, path = key): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(path, 'must be a number');
  return value;
}

function optInteger(body: Json, key: string, path = key): number | undefined {
  const value = optNumber(body, key, path);
  if (value !== undefined && !Number.isInteger(value)) throw invalid(path, 'must be an integer');
  return value;
}

function optString(body: Json, key: string, path = key): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(path, 'must be a string');
  return value;
}

function optBoolean(body: Json, key: string, path = key): boolean | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(path, 'must be a boolean');
  return value;
}

function optObject(body: Json, key: string, path = key): Json | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw invalid(path, 'must be an object');
  return value;
}

/** True when `key` is set to `value` anywhere inside `tree`. */
function deepHas(tree: unknown, key: string, test: (value: unknown) => boolean): boolean {
  if (Array.isArray(tree)) return tree.some((item) => deepHas(item, key, test));
  if (!isObject(tree)) return false;
  for (const [k, v] of Object.entries(tree)) {
    if (k === key && test(v)) return true;
    if (deepHas(v, key, test)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Media

interface DataUrl {
  mimeType: string;
  data: string;
}

const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/;

export function parseDataUrl(url: string, path: string): DataUrl {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) throw invalid(path, 'is not a valid data URL');
  const mimeType = match[1] || 'application/octet-stream';
  const isBase64 = match[2]!.split(';').includes('base64');
  let data = match[3]!;
  if (isBase64) {
    data = data.replace(/\s+/g, '');
    if (!BASE64.test(data)) throw invalid(path, 'data URL is not valid base64');
  } else {
    try {
      data = Buffer.from(decodeURIComponent(data), 'utf8').toString('base64');
    } catch {
      throw invalid(path, 'data URL is not valid percent-encoding');
    }
  }
  return { mimeType, data };
}

type MediaKind = 'image' | 'video' | 'audio' | 'file';

const DEFAULT_MIME: Record<MediaKind, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  file: 'application/pdf',
};

/** A media reference → an inline part (data URL) or a fileData part to fetch (HTTPS). */
export function mediaPart(url: unknown, kind: MediaKind, path: string, mimeHint?: string): GeminiPart {
  if (typeof url !== 'string' || url.length === 0) throw invalid(path, 'must be a URL string');
  if (url.startsWith('data:')) {
    const parsed = parseDataUrl(url, path);
    return { inlineData: { mimeType: mimeHint && parsed.mimeType === 'application/octet-stream' ? mimeHint : parsed.mimeType, data: parsed.data } };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'gs') {
    throw unsupported(TextErrorCode.GcsUriUnsupported, `${path}: raw gs:// URIs are not accepted; send a public or signed HTTPS URL or a base64 data URL`);
  }
  if (scheme === 'https' || scheme === 'http') {
    try {
      new URL(url);
    } catch {
      throw invalid(path, 'is not a valid URL');
    }
    return { fileData: { fileUri: url, mimeType: mimeHint ?? DEFAULT_MIME[kind] } };
  }
  throw invalid(path, 'must be an HTTPS URL or a base64 data URL');
}

/** Every `fileData` URI of the request that must be fetched (HTTP/HTTPS). */
export function pendingMediaUrls(request: GeminiRequest): GeminiPart[] {
  const found: GeminiPart[] = [];
  const visit = (parts: GeminiPart[] | undefined) => {
    for (const part of parts ?? []) {
      if (part.fileData && /^https?:/i.test(part.fileData.fileUri)) found.push(part);
      if (part.functionResponse?.parts) visit(part.functionResponse.parts as GeminiPart[]);
    }
  };
  for (const content of request.contents) visit(content.parts);
  return found;
}

const MEDIA_RESOLUTION: Record<string, string> = {
  low: 'MEDIA_RESOLUTION_LOW',
  medium: 'MEDIA_RESOLUTION_MEDIUM',
  high: 'MEDIA_RESOLUTION_HIGH',
};

function mediaResolution(value: unknown, path: string): { level: string } | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !(value in MEDIA_RESOLUTION)) throw invalid(path, 'must be low, medium or high');
  return { level: MEDIA_RESOLUTION[value]! };
}

/** `1.5`, `"1.5"`, `"1.5s"` → `"1.5s"` (proto Duration). */
function offset(value: unknown, path: string): { text: string; seconds: number } | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim().replace(/s$/, '') : null;
  const seconds = raw === null || raw === '' ? NaN : Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) throw invalid(path, 'must be a non-negative number of seconds such as 1.5 or "1.5s"');
  return { text: `${seconds}s`, seconds };
}

function videoPart(part: Json, path: string): GeminiPart {
  const ref = part.video_url;
  const refObject = isObject(ref) ? ref : {};
  const url = isObject(ref) ? ref.url : ref;
  const result = mediaPart(url, 'video', `${path}.video_url`);
  const read = (key: string) => part[key] ?? refObject[key];
  const fps = read('fps');
  const metadata: { fps?: number; startOffset?: string; endOffset?: string } = {};
  if (fps !== undefined && fps !== null) {
    if (typeof fps !== 'number' || !Number.isFinite(fps) || fps <= 0 || fps > 24) throw invalid(`${path}.fps`, 'must be greater than 0 and at most 24');
    metadata.fps = fps;
  }
  const start = offset(read('startOffset'), `${path}.startOffset`);
  const end = offset(read('endOffset'), `${path}.endOffset`);
  if (start && end && end.seconds <= start.seconds) throw invalid(`${path}.endOffset`, 'must be after startOffset');
  if (start) metadata.startOffset = start.text;
  if (end) metadata.endOffset = end.text;
  if (Object.keys(metadata).length > 0) result.videoMetadata = metadata;
  const resolution = mediaResolution(read('mediaResolution'), `${path}.mediaResolution`);
  if (resolution) result.mediaResolution = resolution;
  return result;
}

const AUDIO_MIME: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3', flac: 'audio/flac', ogg: 'audio/ogg', aac: 'audio/aac', pcm16: 'audio/pcm' };

/** A raw gs:// URI is refused as such wherever it appears, before any base64 reading of the field. */
function refuseGcs(value: unknown, path: string): void {
  if (typeof value === 'string' && /^gs:\/\//i.test(value.trim())) {
    throw unsupported(TextErrorCode.GcsUriUnsupported, `${path}: raw gs:// URIs are not accepted; send a public or signed HTTPS URL or a base64 data URL`);
  }
}

function audioPart(part: Json, path: string): GeminiPart {
  const audio = isObject(part.input_audio) ? part.input_audio : part;
  refuseGcs(audio.data, `${path}.input_audio.data`);
  if (typeof audio.data === 'string' && !audio.data.startsWith('data:')) {
    const format = typeof audio.format === 'string' ? audio.format : 'wav';
    const mimeType = AUDIO_MIME[format];
    if (!mimeType) throw invalid(`${path}.input_audio.format`, `must be one of ${Object.keys(AUDIO_MIME).join(', ')}`);
    const data = audio.data.replace(/\s+/g, '');
    if (!BASE64.test(data)) throw invalid(`${path}.input_audio.data`, 'must be base64');
    return { inlineData: { mimeType, data } };
  }
  const url = audio.data ?? part.audio_url ?? (isObject(part.audio_url) ? part.audio_url.url : undefined);
  return mediaPart(isObject(url) ? url.url : url, 'audio', `${path}.input_audio`);
}

function filePart(part: Json, path: string): GeminiPart {
  const file = isObject(part.file) ? part.file : part;
  if (file.file_id !== undefined) throw invalid(`${path}.file_id`, 'uploaded file ids are not supported; send file_data as a data URL');
  refuseGcs(file.file_data, `${path}.file_data`);
  if (typeof file.file_data === 'string') {
    // OpenAI clients may send bare base64 in file_data; a filename then says the type.
    if (!file.file_data.startsWith('data:')) {
      const data = file.file_data.replace(/\s+/g, '');
      if (!BASE64.test(data)) throw invalid(`${path}.file_data`, 'must be a data URL');
      return { inlineData: { mimeType: mimeFromFilename(file.filename), data } };
    }
    return mediaPart(file.file_data, 'file', `${path}.file_data`, mimeFromFilename(file.filename));
  }
  if (typeof file.file_url === 'string') return mediaPart(file.file_url, 'file', `${path}.file_url`, mimeFromFilename(file.filename));
  throw invalid(path, 'an input_file part needs file_data (a data URL) or file_url');
}

function mimeFromFilename(name: unknown): string {
  if (typeof name !== 'string') return 'application/octet-stream';
  const ext = name.split('.').pop()?.toLowerCase();
  const table: Record<string, string> = {
    pdf: 'application/pdf', txt: 'text/plain', csv: 'text/csv', json: 'application/json', html: 'text/html', md: 'text/markdown',
    png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif',
    mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mp3: 'audio/mp3', wav: 'audio/wav', py: 'text/x-python',
  };
  return (ext && table[ext]) || 'application/octet-stream';
}

const DETAIL_RESOLUTION: Record<string, string> = { low: 'low', high: 'high' };

function imagePart(part: Json, path: string): GeminiPart {
  const ref = part.image_url;
  if (part.file_id !== undefined) throw invalid(`${path}.file_id`, 'uploaded file ids are not supported; send image_url');
  const url = isObject(ref) ? ref.url : ref;
  const result = mediaPart(url, 'image', `${path}.image_url`);
  const detail = isObject(ref) ? ref.detail : part.detail;
  const resolution = mediaResolution(part.mediaResolution ?? (typeof detail === 'string' ? DETAIL_RESOLUTION[detail] : undefined), `${path}.mediaResolution`);
  if (resolution) result.mediaResolution = resolution;
  return result;
}

/** One content part of either operation → a Gemini part. */
export function contentPart(part: unknown, path: string): GeminiPart {
  if (!isObject(part)) throw invalid(path, 'must be an object');
  switch (part.type) {
    case 'text':
    case 'input_text':
    case 'output_text':
      if (typeof part.text !== 'string') throw invalid(`${path}.text`, 'must be a string');
      return { text: part.text };
    case 'refusal':
      if (typeof part.refusal !== 'string') throw invalid(`${path}.refusal`, 'must be a string');
      return { text: part.refusal };
    case 'image_url':
    case 'input_image':
      return imagePart(part, path);
    case 'input_video':
    case 'video_url':
      return videoPart(part, path);
    case 'input_audio':
    case 'audio_url':
      return audioPart(part, path);
    case 'file':
    case 'input_file':
      return filePart(part, path);
    default:
      throw invalid(`${path}.type`, `unsupported content part type ${JSON.stringify(part.type)}`);
  }
}

function contentParts(content: unknown, path: string, textOnly = false): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) throw invalid(path, 'must be a string or an array of content parts');
  return content.map((part, i) => {
    const translated = contentPart(part, `${path}.${i}`);
    if (textOnly && translated.text === undefined) throw invalid(`${path}.${i}`, 'only text parts are accepted here');
    return translated;
  });
}

/**
 * Replayed parts take precedence over the message's reconstructed content, unless they are visibly
 * only the end of a streamed turn: fewer functionCall parts than tool calls, or text that is a strict
 * tail of the message's text. That is what a client keeps when it does not concatenate the chunks'
 * parts (the `openai` SDK's stream helper keeps the last chunk's `providerMetadata` only); the turn
 * is then rebuilt from `content` and `tool_calls`, whose `extra_content.vendor` carries every
 * signature, instead of silently losing calls or text.
 */
function completeReplay(replayed: GeminiPart[] | null, toolCallCount: number, content: unknown): GeminiPart[] | null {
  if (!replayed) return null;
  const calls = replayed.filter((p) => isObject(p.functionCall)).length;
  // The message's visible text is the concatenation of the turn's non-thought text parts.
  const replayedText = replayed.map((p) => (typeof p.text === 'string' && p.thought !== true ? p.text : '')).join('');
  const messageText =
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('') : '';
  // Only the stream's last parts kept: their text is a strict tail of the message's text.
  const onlyTheTail = replayedText !== messageText && messageText.endsWith(replayedText);
  return calls >= toolCallCount && !onlyTheTail ? replayed : null;
}

/** Replayed `providerMetadata.vendor.parts`, unchanged (they take precedence). */
function replayedParts(holder: Json, path: string): GeminiPart[] | null {
  const metadata = holder.providerMetadata;
  if (metadata === undefined || metadata === null) return null;
  if (!isObject(metadata)) throw invalid(`${path}.providerMetadata`, 'must be an object');
  const vendor = metadata.vendor;
  if (vendor === undefined || vendor === null) return null;
  if (!isObject(vendor)) throw invalid(`${path}.providerMetadata.vendor`, 'must be an object');
  if (vendor.parts === undefined || vendor.parts === null) return null;
  if (!Array.isArray(vendor.parts)) throw invalid(`${path}.providerMetadata.vendor.parts`, 'must be an array');
  if (vendor.parts.length === 0) return null;
  vendor.parts.forEach((part, i) => {
    if (!isObject(part)) throw invalid(`${path}.providerMetadata.vendor.parts.${i}`, 'must be an object');
    scanReplayedPart(part, `${path}.providerMetadata.vendor.parts.${i}`);
  });
  return vendor.parts as GeminiPart[];
}

/**
 * Replayed parts go upstream byte for byte, except their file references, which follow the
 * rules of any media link: an HTTPS URL stays a `fileData` part that the service fetches through
 * the guarded client and inlines; a data URL becomes inline bytes (the upstream takes no data
 * URL as a file URI); gs:// is the usual 422; any other scheme (file:, ftp:, a leading space …)
 * is a 400. The snake_case spelling is refused so no reference can slip past these rules.
 */
function scanReplayedPart(part: Json, path: string): void {
  replayedFileReference(part, path);
  const response = part.functionResponse;
  if (part.function_response !== undefined) throw invalid(`${path}.function_response`, 'send functionResponse, as the service returned it');
  if (isObject(response) && Array.isArray(response.parts)) {
    response.parts.forEach((inner, j) => {
      if (isObject(inner)) replayedFileReference(inner, `${path}.functionResponse.parts.${j}`);
    });
  }
}

function replayedFileReference(part: Json, path: string): void {
  if (part.file_data !== undefined) throw invalid(`${path}.file_data`, 'send fileData, as the service returned it');
  const reference = part.fileData;
  if (reference === undefined) return;
  if (!isObject(reference)) throw invalid(`${path}.fileData`, 'must be an object');
  const mimeType = typeof reference.mimeType === 'string' ? reference.mimeType : undefined;
  const media = mediaPart(reference.fileUri, 'file', `${path}.fileData.fileUri`, mimeType);
  delete part.fileData;
  Object.assign(part, media);
}

// ---------------------------------------------------------------------------------------------
// Tool results

interface KnownCall {
  name: string;
  nativeId?: string;
}

function parseArguments(value: unknown, path: string): Record<string, unknown> {
  if (isObject(value)) return value;
  if (typeof value !== 'string') throw invalid(path, 'must be a JSON string');
  if (value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid(path, 'is not valid JSON');
  }
  if (!isObject(parsed)) throw invalid(path, 'must encode a JSON object');
  checkBodyDepth(parsed, path);
  return parsed;
}

/**
 * A tool result (string, or text plus image parts) → functionResponse. A string that encodes a
 * JSON object is sent as the response object itself (computer use reads `url` and
 * `safety_acknowledgement` there); anything else is `{output: <text>}`.
 */
function functionResponsePart(call: KnownCall, output: unknown, path: string): GeminiPart {
  const response: GeminiFunctionResponse = { name: call.name, response: {} };
  if (call.nativeId !== undefined) response.id = call.nativeId;
  let text = '';
  const media: Array<{ inlineData: { mimeType: string; data: string } }> = [];
  if (typeof output === 'string') {
    text = output;
  } else if (Array.isArray(output)) {
    output.forEach((part, i) => {
      const translated = contentPart(part, `${path}.${i}`);
      if (translated.text !== undefined) text += translated.text;
      else media.push(translated as { inlineData: { mimeType: string; data: string } });
    });
  } else {
    throw invalid(path, 'must be a string or an array of text and image parts');
  }
  let parsed: unknown;
  try {
    parsed = text.trim().startsWith('{') ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (isObject(parsed)) checkBodyDepth(parsed, path);
  response.response = isObject(parsed) ? parsed : { output: text };
  if (media.length > 0) response.parts = media;
  return { functionResponse: response };
}

// ---------------------------------------------------------------------------------------------
// Conversations

interface Conversation {
  contents: GeminiContent[];
  system: GeminiPart[];
  /** Role of the last non-system message, for the lite model's rule. */
  lastRole: string | null;
}

function pushUser(contents: GeminiContent[], parts: GeminiPart[], mergeToolResults: boolean): void {
  const last = contents[contents.length - 1];
  if (mergeToolResults && last?.role === 'user' && last.parts.every((p) => p.functionResponse)) {
    last.parts.push(...parts);
    return;
  }
  contents.push({ role: 'user', parts });
}

function chatConversation(messages: unknown): Conversation {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'must be an array with at least 1 item');
  const contents: GeminiContent[] = [];
  const system: GeminiPart[] = [];
  const calls = new Map<string, KnownCall>();
  let lastRole: string | null = null;

  messages.forEach((message, i) => {
    const path = `messages.${i}`;
    if (!isObject(message)) throw invalid(path, 'must be an object');
    const role = message.role;
    switch (role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(message.content, `${path}.content`, true));
        return;
      case 'user': {
        const parts = contentParts(message.content, `${path}.content`);
        if (parts.length === 0) throw invalid(`${path}.content`, 'must not be empty');
        contents.push({ role: 'user', parts });
        break;
      }
      case 'assistant': {
        const toolCalls = message.tool_calls ?? [];
        if (!Array.isArray(toolCalls)) throw invalid(`${path}.tool_calls`, 'must be an array');
        const replayed = completeReplay(replayedParts(message, path), toolCalls.length, message.content);
        const parts: GeminiPart[] = [];
        if (!replayed && message.content !== undefined && message.content !== null) {
          for (const part of contentParts(message.content, `${path}.content`, true)) if (part.text) parts.push(part);
        }
        const replayedCalls = (replayed ?? []).filter((p) => isObject(p.functionCall));
        toolCalls.forEach((call, j) => {
          const callPath = `${path}.tool_calls.${j}`;
          if (!isObject(call)) throw invalid(callPath, 'must be an object');
          if (typeof call.id !== 'string' || call.id === '') throw invalid(`${callPath}.id`, 'must be a non-empty string');
          const fn = call.function;
          if (!isObject(fn) || typeof fn.name !== 'string') throw invalid(`${callPath}.function.name`, 'must be a string');
          const extra = isObject(call.extra_content) && isObject(call.extra_content.vendor) ? call.extra_content.vendor : {};
          const signature = typeof extra.thought_signature === 'string' ? extra.thought_signature : undefined;
          let nativeId = typeof extra.function_call_id === 'string' ? extra.function_call_id : undefined;
          if (nativeId === undefined) {
            const fromParts = replayedCalls[j]?.functionCall;
            if (fromParts && fromParts.name === fn.name && typeof fromParts.id === 'string') nativeId = fromParts.id;
          }
          calls.set(call.id, { name: fn.name, nativeId });
          if (!replayed) {
            const part: GeminiPart = { functionCall: { name: fn.name, args: parseArguments(fn.arguments, `${callPath}.function.arguments`) } };
            if (nativeId !== undefined) part.functionCall!.id = nativeId;
            if (signature !== undefined) part.thoughtSignature = signature;
            parts.push(part);
          }
        });
        const finalParts = replayed ?? parts;
        if (finalParts.length > 0) contents.push({ role: 'model', parts: finalParts });
        break;
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw invalid(`${path}.tool_call_id`, 'must be a string');
        const call = calls.get(message.tool_call_id);
        if (!call) {
          throw new DomainError(400, TextErrorCode.UnknownToolCall, `${path}.tool_call_id: no earlier assistant tool call has id ${JSON.stringify(message.tool_call_id)}`);
        }
        pushUser(contents, [functionResponsePart(call, message.content, `${path}.content`)], true);
        break;
      }
      default:
        throw invalid(`${path}.role`, 'must be system, developer, user, assistant or tool');
    }
    lastRole = role as string;
  });
  return { contents, system, lastRole };
}

function responsesConversation(input: unknown, instructions: string | undefined): Conversation {
  const system: GeminiPart[] = instructions ? [{ text: instructions }] : [];
  if (typeof input === 'string') return { contents: [{ role: 'user', parts: [{ text: input }] }], system, lastRole: 'user' };
  if (!Array.isArray(input) || input.length === 0) throw invalid('input', 'must be a string or a non-empty array of items');
  const contents: GeminiContent[] = [];
  const calls = new Map<string, KnownCall>();
  let lastRole: string | null = null;
  /** Whether the last model content may take the next assistant-side item (one model turn). */
  let modelOpen = false;

  const pushModel = (parts: GeminiPart[]) => {
    const last = contents[contents.length - 1];
    if (modelOpen && last?.role === 'model') last.parts.push(...parts);
    else contents.push({ role: 'model', parts });
    modelOpen = true;
  };

  input.forEach((item, i) => {
    const path = `input.${i}`;
    if (!isObject(item)) throw invalid(path, 'must be an object');
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (role === 'system' || role === 'developer') {
        system.push(...contentParts(item.content, `${path}.content`, true));
        return;
      }
      if (role === 'user') {
        const parts = contentParts(item.content, `${path}.content`);
        if (parts.length === 0) throw invalid(`${path}.content`, 'must not be empty');
        contents.push({ role: 'user', parts });
        modelOpen = false;
      } else if (role === 'assistant') {
        const replayed = replayedParts(item, path);
        const parts = replayed ?? contentParts(item.content, `${path}.content`, true).filter((p) => p.text);
        if (parts.length > 0) pushModel(parts);
      } else {
        throw invalid(`${path}.role`, 'must be system, developer, user or assistant');
      }
      lastRole = role;
      return;
    }
    if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || item.call_id === '') throw invalid(`${path}.call_id`, 'must be a non-empty string');
      if (typeof item.name !== 'string') throw invalid(`${path}.name`, 'must be a string');
      const replayed = replayedParts(item, path);
      const replayedCall = replayed?.find((p) => isObject(p.functionCall))?.functionCall;
      const nativeId = replayedCall && replayedCall.name === item.name && typeof replayedCall.id === 'string' ? replayedCall.id : undefined;
      calls.set(item.call_id, { name: item.name, nativeId });
      pushModel(replayed ?? [{ functionCall: { name: item.name, args: parseArguments(item.arguments, `${path}.arguments`) } }]);
      lastRole = 'assistant';
      return;
    }
    if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') throw invalid(`${path}.call_id`, 'must be a string');
      const call = calls.get(item.call_id);
      if (!call) throw new DomainError(400, TextErrorCode.UnknownToolCall, `${path}.call_id: no earlier function_call item has call_id ${JSON.stringify(item.call_id)}`);
      pushUser(contents, [functionResponsePart(call, item.output, `${path}.output`)], true);
      modelOpen = false;
      lastRole = 'tool';
      return;
    }
    if (type === 'reasoning') return; // never produced by this service; accepted and skipped
    throw invalid(`${path}.type`, `unsupported input item type ${JSON.stringify(type)}`);
  });
  return { contents, system, lastRole };
}

// ---------------------------------------------------------------------------------------------
// Tools

function functionDeclarations(tools: unknown, operation: TextOperation): GeminiFunctionDeclaration[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalid('tools', 'must be an array');
  checkDeclarationCount(tools.length);
  const names = new Set<string>();
  return tools.map((tool, i) => {
    const path = `tools.${i}`;
    if (!isObject(tool)) throw invalid(path, 'must be an object');
    if (tool.type !== 'function') {
      throw invalid(`${path}.type`, 'only function tools are accepted here; enable code execution and computer use with providerOptions.vendor.tools');
    }
    const fn = operation === 'chat' ? tool.function : tool;
    const fnPath = operation === 'chat' ? `${path}.function` : path;
    if (!isObject(fn)) throw invalid(fnPath, 'must be an object');
    if (typeof fn.name !== 'string' || !FUNCTION_NAME.test(fn.name)) {
      throw invalid(`${fnPath}.name`, 'must start with a letter or underscore and hold up to 128 of A-Z a-z 0-9 _ . : -');
    }
    if (names.has(fn.name)) throw invalid(`${fnPath}.name`, `duplicate function name ${fn.name}`);
    names.add(fn.name);
    const declaration: GeminiFunctionDeclaration = { name: fn.name };
    if (fn.description !== undefined && fn.description !== null) {
      if (typeof fn.description !== 'string') throw invalid(`${fnPath}.description`, 'must be a string');
      declaration.description = fn.description;
    }
    if (fn.parameters !== undefined && fn.parameters !== null) {
      if (!isObject(fn.parameters)) throw invalid(`${fnPath}.parameters`, 'must be a JSON schema object');
      checkSchemaLimits(fn.parameters, `${fnPath}.parameters`);
      declaration.parametersJsonSchema = fn.parameters;
    }
    return declaration;
  });
}

function functionCallingConfig(
  choice: unknown,
  declared: GeminiFunctionDeclaration[],
  anyTools: boolean,
): { mode?: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } {
  if (choice === undefined || choice === null) return {};
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') {
    if (!anyTools) throw invalid('tool_choice', '"required" needs at least one tool');
    return { mode: 'ANY' };
  }
  if (isObject(choice) && choice.type === 'function') {
    // Chat's nested {function: {name}} and Responses' flat {name}, accepted in both operations.
    const name = isObject(choice.function) ? choice.function.name : choice.name;
    if (typeof name !== 'string') throw invalid('tool_choice', 'a named tool choice needs the function name');
    if (!declared.some((d) => d.name === name)) {
      throw new DomainError(400, TextErrorCode.ToolChoiceUndeclared, `tool_choice: function ${JSON.stringify(name)} is not declared in tools`);
    }
    return { mode: 'ANY', allowedFunctionNames: [name] };
  }
  throw invalid('tool_choice', 'must be "auto", "none", "required" or a named function object');
}

// ---------------------------------------------------------------------------------------------
// Structured output

/** The generationConfig fields of an explicit output format; undefined when none was asked. */
function structuredOutput(format: Json | undefined, path: string, nested: boolean): Partial<GeminiGenerationConfig> | undefined {
  if (!format) return undefined;
  switch (format.type) {
    case 'text':
      return {};
    case 'json_object':
      return { responseMimeType: 'application/json' };
    case 'json_schema': {
      const holder = nested ? format.json_schema : format;
      if (!isObject(holder)) throw invalid(`${path}.json_schema`, 'must be an object');
      if (!isObject(holder.schema)) throw invalid(`${path}${nested ? '.json_schema' : ''}.schema`, 'must be a JSON schema object');
      checkSchemaLimits(holder.schema, `${path}${nested ? '.json_schema' : ''}.schema`);
      return { responseMimeType: 'application/json', responseJsonSchema: holder.schema };
    }
    default:
      throw invalid(`${path}.type`, 'must be text, json_object or json_schema');
  }
}

// ---------------------------------------------------------------------------------------------
// The whole request

const VENDOR_KEYS = new Set(['generationConfig', 'safetySettings', 'tools', 'toolConfig']);

const camelCase = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * The same object with `snake_case` keys written `camelCase`. Gemini's JSON accepts both
 * spellings of its fields, so the vendor block is read in one (the rules below check camelCase
 * names and a snake_case spelling must not slip past them). Only the keys of this object change:
 * values (schemas, user data) are kept as sent. Both spellings of one field at once are refused.
 */
function camelKeys(object: Json, path: string): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(object)) {
    const name = camelCase(key);
    if (Object.hasOwn(out, name)) throw invalid(`${path}.${key}`, `given twice (as ${name} and ${key})`);
    out[name] = value;
  }
  return out;
}

/** camelKeys on `parent[key]` when it is an object (other shapes are judged where they are used). */
function camelChild(parent: Json, key: string, path: string): void {
  if (isObject(parent[key])) parent[key] = camelKeys(parent[key], `${path}.${key}`);
}

/**
 * `providerOptions.vendor`, normalized to Gemini's camelCase names at every configuration level
 * (generationConfig and its thinkingConfig, toolConfig and its functionCallingConfig, each tool
 * and computerUse, each safety setting), so every rule applies whichever spelling was sent.
 */
function vendorOptions(body: Json): Json {
  const options = optObject(body, 'providerOptions');
  if (!options) return {};
  const given = optObject(options, 'vendor', 'providerOptions.vendor');
  if (!given) return {};
  const path = 'providerOptions.vendor';
  const vendor = camelKeys(given, path);
  for (const key of Object.keys(vendor)) {
    if (!VENDOR_KEYS.has(key)) throw invalid(`${path}.${key}`, 'unknown field (accepted: generationConfig, safetySettings, tools, toolConfig)');
  }
  if (vendor.generationConfig !== undefined && !isObject(vendor.generationConfig)) throw invalid(`${path}.generationConfig`, 'must be an object');
  if (vendor.toolConfig !== undefined && !isObject(vendor.toolConfig)) throw invalid(`${path}.toolConfig`, 'must be an object');
  if (vendor.tools !== undefined && !Array.isArray(vendor.tools)) throw invalid(`${path}.tools`, 'must be an array');
  if (vendor.safetySettings !== undefined && !Array.isArray(vendor.safetySettings)) throw invalid(`${path}.safetySettings`, 'must be an array');
  // responseSchema / responseJsonSchema live here.
  if (vendor.generationConfig !== undefined) checkSchemaLimits(vendor.generationConfig, `${path}.generationConfig`);
  camelChild(vendor, 'generationConfig', path);
  if (isObject(vendor.generationConfig)) camelChild(vendor.generationConfig, 'thinkingConfig', `${path}.generationConfig`);
  camelChild(vendor, 'toolConfig', path);
  if (isObject(vendor.toolConfig)) camelChild(vendor.toolConfig, 'functionCallingConfig', `${path}.toolConfig`);
  vendor.tools = (vendor.tools as unknown[] | undefined)?.map((tool, i) => {
    if (!isObject(tool)) throw invalid(`${path}.tools.${i}`, 'must be an object');
    // A vendor tool carries function declarations (schemas) in any spelling: its whole tree is bounded.
    checkSchemaLimits(tool, `${path}.tools.${i}`);
    const normalized = camelKeys(tool, `${path}.tools.${i}`);
    camelChild(normalized, 'computerUse', `${path}.tools.${i}`);
    if (isObject(normalized.computerUse)) {
      const env = normalized.computerUse.environment;
      if (env !== undefined && !['ENVIRONMENT_BROWSER', 'ENVIRONMENT_MOBILE', 'ENVIRONMENT_DESKTOP', 'ENVIRONMENT_UNSPECIFIED'].includes(env as string)) {
        throw invalid(`${path}.tools.${i}.computerUse.environment`, 'must be ENVIRONMENT_BROWSER or ENVIRONMENT_MOBILE');
      }
    }
    return normalized;
  });
  if (vendor.tools === undefined) delete vendor.tools;
  if (Array.isArray(vendor.safetySettings)) {
    vendor.safetySettings = vendor.safetySettings.map((setting, i) => (isObject(setting) ? camelKeys(setting, `${path}.safetySettings.${i}`) : setting));
  }
  return vendor;
}

function reasoningEffort(body: Json, operation: TextOperation): string | undefined {
  const flat = body.reasoning_effort;
  const nested = operation === 'responses' && isObject(body.reasoning) ? body.reasoning.effort : undefined;
  const value = flat ?? nested ?? undefined;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid('reasoning_effort', 'must be a string');
  return value;
}

function maxTokens(body: Json, model: TextModelId): number | undefined {
  let value: number | undefined;
  for (const key of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const given = optInteger(body, key);
    if (given === undefined) continue;
    if (given < 1) throw invalid(key, 'must be at least 1');
    if (given > MAX_OUTPUT_TOKENS) throw invalid(key, `must be at most ${MAX_OUTPUT_TOKENS} for ${model}`);
    value ??= given;
  }
  return value;
}

function stopSequences(body: Json): string[] | undefined {
  const stop = body.stop;
  if (stop === undefined || stop === null) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s.length === 0)) throw invalid('stop', 'must be a non-empty string or an array of non-empty strings');
  if (list.length > 5) throw invalid('stop', 'at most 5 stop sequences');
  return list as string[];
}

/** Validates a Chat or Responses request and builds the Gemini request. Throws DomainError. */
export function translateTextRequest(operation: TextOperation, rawBody: unknown): TranslatedTextRequest {
  if (!isObject(rawBody)) throw invalid('body', 'must be a JSON object');
  checkBodyDepth(rawBody);
  const body = rawBody;

  if (body.model === undefined || body.model === null) throw invalid('model', 'is required');
  if (typeof body.model !== 'string') throw invalid('model', 'must be a string');
  if (!isTextModel(body.model)) {
    throw new DomainError(400, TextErrorCode.UnknownModel, `model: unknown model ${JSON.stringify(body.model)}; use one of ${TEXT_MODEL_IDS.join(', ')}`);
  }
  const model = body.model;
  const rules = MODEL_RULES[model];

  // Refusals of unsupported features (422).
  if (body.background === true) throw unsupported(TextErrorCode.BackgroundUnsupported, 'background: background responses are not supported; omit it or send false');
  optBoolean(body, 'background');
  if (body.parallel_tool_calls === false) {
    throw unsupported(TextErrorCode.ParallelToolCallsUnsupported, 'parallel_tool_calls: false is not supported; omit it or send true');
  }
  optBoolean(body, 'parallel_tool_calls');
  const n = optInteger(body, 'n');
  if (n !== undefined && n !== 1) throw unsupported(TextErrorCode.CandidateCountUnsupported, 'n: the number of candidates is fixed at 1');
  const vendor = vendorOptions(body);
  if (deepHas(body, 'streamFunctionCallArguments', (v) => v === true) || deepHas(vendor, 'streamFunctionCallArguments', (v) => v === true)) {
    throw unsupported(TextErrorCode.StreamFunctionCallArgumentsUnsupported, 'streamFunctionCallArguments: true is not supported; function arguments arrive whole');
  }
  const vendorGeneration = (vendor.generationConfig as Json | undefined) ?? {};
  if (vendorGeneration.candidateCount !== undefined && vendorGeneration.candidateCount !== 1) {
    throw unsupported(TextErrorCode.CandidateCountUnsupported, 'providerOptions.vendor.generationConfig.candidateCount: the number of candidates is fixed at 1');
  }
  const vendorThinking = isObject(vendorGeneration.thinkingConfig) ? vendorGeneration.thinkingConfig : undefined;
  if (vendorGeneration.thinkingConfig !== undefined && !vendorThinking) throw invalid('providerOptions.vendor.generationConfig.thinkingConfig', 'must be an object');
  const vendorBudget = vendorThinking?.thinkingBudget;
  if (vendorBudget !== undefined && !rules.thinkingBudget) {
    throw unsupported(TextErrorCode.ThinkingBudgetUnsupported, `providerOptions.vendor.generationConfig.thinkingConfig.thinkingBudget: not supported on ${model}; use reasoning_effort`);
  }

  // Sampling and limits (400 when malformed or out of range; checked on every model).
  const temperature = optNumber(body, 'temperature');
  // The lite model ignores custom temperature (spec model rules), so its value is not judged there;
  // top_p and top_k ranges are the spec's own limits, judged on every model.
  if (temperature !== undefined && !rules.lite && (temperature < 0 || temperature > 2)) throw invalid('temperature', 'must be between 0 and 2');
  const topP = optNumber(body, 'top_p');
  if (topP !== undefined && (topP < 0 || topP > 1)) throw invalid('top_p', 'must be between 0 and 1');
  const topK = optInteger(body, 'top_k');
  if (topK !== undefined && topK < 1) throw invalid('top_k', 'must be at least 1');
  const seed = optInteger(body, 'seed');
  const frequencyPenalty = optNumber(body, 'frequency_penalty');
  const presencePenalty = optNumber(body, 'presence_penalty');
  for (const [key, value] of [['frequency_penalty', frequencyPenalty], ['presence_penalty', presencePenalty]] as const) {
    if (value !== undefined && (value < -2 || value >= 2)) throw invalid(key, 'must be at least -2 and below 2');
  }
  const outputCap = maxTokens(body, model);
  const stop = stopSequences(body);
  const stream = optBoolean(body, 'stream') ?? false;
  const streamOptions = optObject(body, 'stream_options');
  const includeUsage = streamOptions ? (optBoolean(streamOptions, 'include_usage', 'stream_options.include_usage') ?? false) : false;

  if (rules.lite && (frequencyPenalty !== undefined || presencePenalty !== undefined || vendorGeneration.frequencyPenalty !== undefined || vendorGeneration.presencePenalty !== undefined)) {
    throw unsupported(TextErrorCode.PenaltiesUnsupported, `frequency_penalty and presence_penalty are not supported on ${model}`);
  }

  // Reasoning level.
  const effort = reasoningEffort(body, operation);
  const vendorLevel = typeof vendorThinking?.thinkingLevel === 'string' ? vendorThinking.thinkingLevel.toLowerCase() : undefined;
  for (const [label, level] of [['reasoning_effort', effort], ['providerOptions.vendor.generationConfig.thinkingConfig.thinkingLevel', vendorLevel]] as const) {
    if (level !== undefined && !(rules.levels as string[]).includes(level)) {
      throw unsupported(TextErrorCode.ReasoningEffortUnsupported, `${label}: ${JSON.stringify(level)} is not supported on ${model}; use one of ${rules.levels.join(', ')}`);
    }
  }

  // Conversation.
  const instructions = optString(body, 'instructions');
  if (operation === 'chat' && body.messages === undefined) throw invalid('messages', 'is required');
  if (operation === 'responses' && body.input === undefined) throw invalid('input', 'is required');
  const conversation = operation === 'chat' ? chatConversation(body.messages) : responsesConversation(body.input, instructions);
  if (conversation.contents.length === 0) throw invalid(operation === 'chat' ? 'messages' : 'input', 'needs at least one user message');
  if (rules.lite && conversation.lastRole === 'assistant') {
    throw unsupported(TextErrorCode.FinalAssistantMessageUnsupported, `${model} does not accept a conversation whose final non-system message has the assistant role`);
  }

  // Tools.
  const declarations = functionDeclarations(body.tools, operation);
  const vendorTools = (vendor.tools as GeminiTool[] | undefined) ?? [];
  checkDeclarationCount(declarations.length + vendorTools.reduce((n, tool) => n + (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.length : 0), 0));
  const fcc = functionCallingConfig(body.tool_choice, declarations, declarations.length > 0 || vendorTools.length > 0);

  // Structured output.
  const format =
    operation === 'chat'
      ? structuredOutput(optObject(body, 'response_format'), 'response_format', true)
      : structuredOutput(optObject(optObject(body, 'text') ?? {}, 'format', 'text.format'), 'text.format', false);

  // generationConfig: the vendor block first, normalized fields win.
  const generationConfig: GeminiGenerationConfig = { ...vendorGeneration };
  if (format) {
    // An explicit response_format / text.format decides the output format alone.
    delete generationConfig.responseMimeType;
    delete generationConfig.responseSchema;
    delete generationConfig.responseJsonSchema;
  }
  const set = <K extends keyof GeminiGenerationConfig>(key: K, value: GeminiGenerationConfig[K] | undefined) => {
    if (value !== undefined) generationConfig[key] = value;
  };
  set('temperature', temperature);
  set('topP', topP);
  set('topK', topK);
  set('maxOutputTokens', outputCap);
  set('stopSequences', stop);
  set('seed', seed);
  set('frequencyPenalty', frequencyPenalty);
  set('presencePenalty', presencePenalty);
  Object.assign(generationConfig, format);
  generationConfig.candidateCount = 1;
  if (rules.lite) {
    // Custom sampling is ignored on the lite model (spec model rules).
    delete generationConfig.temperature;
    delete generationConfig.topP;
    delete generationConfig.topK;
  }
  const thinking = { ...(vendorThinking ?? {}) };
  if (effort !== undefined) {
    thinking.thinkingLevel = effort.toUpperCase();
    delete thinking.thinkingBudget;
  } else if (vendorLevel !== undefined) {
    thinking.thinkingLevel = vendorLevel.toUpperCase();
  } else if (thinking.thinkingBudget === undefined) {
    thinking.thinkingLevel = rules.defaultLevel.toUpperCase();
  }
  generationConfig.thinkingConfig = thinking;

  const gemini: GeminiRequest = { contents: conversation.contents };
  if (conversation.system.length > 0) gemini.systemInstruction = { parts: conversation.system };
  const tools: GeminiTool[] = [];
  if (declarations.length > 0) tools.push({ functionDeclarations: declarations });
  tools.push(...vendorTools);
  if (tools.length > 0) gemini.tools = tools;
  const vendorToolConfig = (vendor.toolConfig as Json | undefined) ?? {};
  const vendorFcc = isObject(vendorToolConfig.functionCallingConfig) ? vendorToolConfig.functionCallingConfig : {};
  if (Object.keys(vendorToolConfig).length > 0 || Object.keys(fcc).length > 0) {
    const merged = { ...vendorFcc, ...fcc };
    // tool_choice wins; the vendor's allowed names refine only a mode that allows them (ANY).
    if (fcc.mode !== undefined && fcc.mode !== 'ANY') delete merged.allowedFunctionNames;
    gemini.toolConfig = { ...vendorToolConfig };
    if (Object.keys(merged).length > 0) gemini.toolConfig.functionCallingConfig = merged;
  }
  if (vendor.safetySettings) gemini.safetySettings = vendor.safetySettings as unknown[];
  gemini.generationConfig = generationConfig;

  const echo: Record<string, unknown> = {
    instructions: instructions ?? null,
    metadata: isObject(body.metadata) ? body.metadata : {},
    parallel_tool_calls: true,
    temperature: temperature ?? null,
    top_p: topP ?? null,
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    max_output_tokens: outputCap ?? null,
    text: isObject(body.text) ? body.text : { format: { type: 'text' } },
    reasoning: { effort: effort ?? (thinking.thinkingLevel as string | undefined)?.toLowerCase() ?? null, summary: null },
    previous_response_id: null,
    truncation: 'disabled',
    user: typeof body.user === 'string' ? body.user : null,
  };

  return {
    operation,
    model,
    stream,
    includeUsage,
    gemini,
    maxOutputTokens: outputCap ?? MAX_OUTPUT_TOKENS,
    echo,
  };
}

/**
 * Conservative input-token estimate for the wallet hold: text at 3 characters per token (real
 * tokenizers give about 4), and each media part at the larger of 1,120 tokens and one token per
 * 64 bytes. Settlement uses the upstream's own counts.
 */
export function estimateInputTokens(request: GeminiRequest): number {
  let chars = 0;
  let tokens = 0;
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      chars += value.length;
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isObject(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if ((key === 'inlineData' || key === 'fileData') && isObject(child)) {
        const bytes = typeof child.data === 'string' ? Math.floor((child.data.length * 3) / 4) : 0;
        tokens += Math.max(1120, Math.ceil(bytes / 64));
        continue;
      }
      if (key === 'thoughtSignature') continue;
      visit(child);
    }
  };
  visit(request.contents);
  visit(request.systemInstruction);
  visit(request.tools);
  return tokens + Math.ceil(chars / 3) + 8;
}
