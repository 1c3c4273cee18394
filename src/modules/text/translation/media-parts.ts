/**
 * Content parts of both operations (text, image, video, audio, file) → Gemini parts. Data URLs
 * are decoded here; HTTPS links become `fileData` parts that TextMediaResolver fetches through
 * the guarded client before the call (`pendingMediaUrls`); gs:// is refused.
 */
import type { GeminiPart, GeminiRequest } from '../../../../libs/providers/index.js';
import { invalid, TextErrorCode, unsupported } from '../text-errors.js';
import { isObject, type Json } from './json-readers.js';

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

export type MediaKind = 'image' | 'video' | 'audio' | 'file';

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

/** The media part types of both operations (Chat's and Responses' names) and their readers. */
const MEDIA_PART_READERS: Record<string, (part: Json, path: string) => GeminiPart> = {
  image_url: imagePart,
  input_image: imagePart,
  input_video: videoPart,
  video_url: videoPart,
  input_audio: audioPart,
  audio_url: audioPart,
  file: filePart,
  input_file: filePart,
};

/** One content part of either operation → a Gemini part. */
export function contentPart(part: unknown, path: string): GeminiPart {
  if (!isObject(part)) throw invalid(path, 'must be an object');
  const readMedia = typeof part.type === 'string' && Object.hasOwn(MEDIA_PART_READERS, part.type) ? MEDIA_PART_READERS[part.type] : undefined;
  if (readMedia) return readMedia(part, path);
  switch (part.type) {
    case 'text':
    case 'input_text':
    case 'output_text':
      if (typeof part.text !== 'string') throw invalid(`${path}.text`, 'must be a string');
      return { text: part.text };
    case 'refusal':
      if (typeof part.refusal !== 'string') throw invalid(`${path}.refusal`, 'must be a string');
      return { text: part.refusal };
    default:
      throw invalid(`${path}.type`, `unsupported content part type ${JSON.stringify(part.type)}`);
  }
}

export function contentParts(content: unknown, path: string, textOnly = false): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) throw invalid(path, 'must be a string or an array of content parts');
  return content.map((part, i) => {
    const translated = contentPart(part, `${path}.${i}`);
    if (textOnly && translated.text === undefined) throw invalid(`${path}.${i}`, 'only text parts are accepted here');
    return translated;
  });
}
