/**
 * A fake ElevenLabs API speaking the real wire format (upstreams.md §2) for adapter and
 * end-to-end tests: `POST /v1/text-to-speech/{voice_id}[/stream]`, `POST /v1/text-to-dialogue`
 * (audio bytes with `request-id`, `x-character-count`, `character-cost`), `GET /v1/shared-voices`
 * and `GET /v2/voices` (a paged catalogue), `xi-api-key` auth, and the error envelopes
 * `{detail:{status,message}}` / 422 `{detail:[{loc,msg,type}]}`.
 *
 * A generation behaves as the next queued behaviour (`next()`), else as a marker in its text
 * says (for tests that drive the whole app), else succeeds:
 *   `fake:rate-limit` 429 too_many_concurrent_requests (`fake:rate-limit-once`: once per text)
 *   `fake:server-error` 500 (`fake:server-error-once`: once per text)
 *   `fake:lose-answer` reads the request, then destroys the socket unanswered
 *   `fake:quota` 401 quota_exceeded
 * It records every request (method, path, query, headers, JSON body).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ElevenLabsSharedVoice, ElevenLabsVoice } from '../../libs/providers/src/audio/elevenlabs-types.js';

export type FakeElevenLabsBehaviour =
  /** Audio for the text; `billingHeaders` picks which billing headers are sent (default both). */
  | { kind: 'success'; billingHeaders?: 'both' | 'character-cost' | 'none'; billed?: number }
  | { kind: 'error'; status: number; detailStatus: string; message?: string; retryAfter?: string }
  /** 422 with FastAPI's list-shaped detail for these body fields. */
  | { kind: 'validation'; fields: string[] }
  /** The request is read, then the socket is destroyed without an answer. */
  | { kind: 'lose-answer' }
  /** The request is read and never answered (the client's timeout ends it). */
  | { kind: 'hang' }
  /** 200 and part of the audio, then the socket is destroyed. */
  | { kind: 'cut-body' }
  /** `chunks` chunks of `chunkBytes` with `pauseMs` between them, then a stall that never ends. */
  | { kind: 'slow-stream'; chunks: number; chunkBytes: number; pauseMs: number }
  /** 200 with `bytes` of audio; `declareLength` sends content-length (else chunked). */
  | { kind: 'oversize'; bytes: number; declareLength?: boolean };

export interface RecordedElevenLabsRequest {
  method: string;
  path: string;
  query: Record<string, string[]>;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

const CONTENT_TYPES: Record<string, string> = { mp3_44100_128: 'audio/mpeg', pcm_24000: 'audio/pcm' };
const MARKERS: Array<[string, FakeElevenLabsBehaviour]> = [
  ['fake:rate-limit', { kind: 'error', status: 429, detailStatus: 'too_many_concurrent_requests', retryAfter: '1' }],
  ['fake:server-error', { kind: 'error', status: 500, detailStatus: 'internal_error' }],
  ['fake:lose-answer', { kind: 'lose-answer' }],
  ['fake:quota', { kind: 'error', status: 401, detailStatus: 'quota_exceeded', message: 'This request exceeds your quota of 10000. Key sk_secret_123 has 12 credits left.' }],
];

/** Seconds of audio the fake makes for a text: one per 15 characters, at least one. */
export function fakeSeconds(characters: number): number {
  return Math.max(1, Math.ceil(characters / 15));
}

/** Deterministic audio: MP3-looking frames, or exactly 2 × 24000 × seconds bytes of 16-bit PCM (a 440 Hz tone). */
export function fakeAudio(characters: number, format: string): Buffer {
  const seconds = fakeSeconds(characters);
  if (format.startsWith('pcm_')) {
    const samples = 24_000 * seconds;
    const pcm = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24_000)), i * 2);
    return pcm;
  }
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  const frames = Array.from({ length: Math.ceil(seconds * 38.28) }, (_, i) => {
    const copy = Buffer.from(frame);
    copy.writeUInt16BE(i % 65536, 8);
    return copy;
  });
  return Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), ...frames]);
}

/** 65 library voices (paging at 30 is real); every 10th carries a custom rate. */
function libraryVoices(): ElevenLabsSharedVoice[] {
  const languages = ['en', 'de', 'fr', 'es'];
  const genders = ['female', 'male', 'neutral'];
  const ages = ['young', 'middle_aged', 'old'];
  return Array.from({ length: 65 }, (_, i) => {
    const n = String(i + 1).padStart(2, '0');
    const custom = (i + 1) % 10 === 0;
    return {
      public_owner_id: `owner${n}`,
      voice_id: `SV${n}xQ7pLm2RtK9wZ4cY`,
      date_unix: 1_700_000_000 + i,
      name: `Library ${['Aria', 'Bruno', 'Chloe', 'Dario', 'Elin'][i % 5]} ${n}`,
      accent: ['american', 'british', 'standard'][i % 3],
      gender: genders[i % 3],
      age: ages[Math.floor(i / 3) % 3],
      descriptive: 'calm',
      use_case: 'narrative_story',
      category: 'professional',
      language: languages[i % 4],
      locale: `${languages[i % 4]}-XX`,
      description: `A calm library voice number ${n}.`,
      preview_url: `https://storage.example/previews/SV${n}.mp3`,
      usage_character_count_1y: 1000 * i,
      cloned_by_count: i,
      free_users_allowed: true,
      live_moderation_enabled: false,
      featured: false,
      ...(custom ? { rate: 2, fiat_rate: 0.3 } : {}),
    } as ElevenLabsSharedVoice;
  });
}

function accountVoices(): ElevenLabsVoice[] {
  const premade = (voice_id: string, name: string, gender: string, accent: string): ElevenLabsVoice => ({
    voice_id,
    name,
    category: 'premade',
    description: null,
    preview_url: `https://storage.example/premade/${voice_id}.mp3`,
    labels: { gender, accent, age: 'middle_aged', language: 'en' },
    is_owner: false,
  });
  return [
    premade('JBFqnCBsd6RMkjVDRZzb', 'George', 'male', 'british'),
    premade('21m00Tcm4TlvDq8ikWAM', 'Rachel', 'female', 'american'),
    premade('Aw4FAjKCGjjNkVhN1Xmq', 'Alice', 'female', 'british'),
    { voice_id: 'CLn0wnPrivateVoice01', name: 'Our clone', category: 'cloned', labels: {}, is_owner: true },
  ];
}

export class FakeElevenLabsServer {
  readonly apiKey = 'fake-elevenlabs-key';
  readonly requests: RecordedElevenLabsRequest[] = [];
  readonly library = libraryVoices();
  readonly account = accountVoices();
  baseUrl = '';
  /** Answer custom-rate voices even when asked not to (an upstream that changed its mind). */
  ignoreCustomRateFilter = false;
  private server!: Server;
  private readonly queued: FakeElevenLabsBehaviour[] = [];
  private readonly seenOnce = new Set<string>();

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next generation request behaves so (queued, first in first out). */
  next(behaviour: FakeElevenLabsBehaviour): void {
    this.queued.push(behaviour);
  }

  /** Requests to paths that start with `prefix`. */
  requestsTo(prefix: string): RecordedElevenLabsRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.baseUrl);
    const raw = await readBody(request);
    const query: Record<string, string[]> = {};
    for (const [key, value] of url.searchParams) (query[key] ??= []).push(value);
    const body = parseJson(raw);
    if (body === undefined) return detailError(response, 400, 'invalid_json', 'body is not JSON');
    this.requests.push({ method: request.method ?? '', path: url.pathname, query, headers: request.headers, body });
    if (request.headers['xi-api-key'] !== this.apiKey) return detailError(response, 401, 'invalid_api_key', 'Invalid API key');

    if (request.method === 'GET' && url.pathname === '/v1/shared-voices') return this.sharedVoices(url, response);
    if (request.method === 'GET' && url.pathname === '/v2/voices') return this.ownVoices(url, response);
    const speech = /^\/v1\/text-to-speech\/([^/]+)(\/stream)?$/.exec(url.pathname);
    if (request.method === 'POST' && speech) {
      const text = String(body?.text ?? '');
      if (!body?.text) return validationError(response, ['text']);
      return this.generate(request, response, url, [decodeURIComponent(speech[1]!)], text, Boolean(speech[2]));
    }
    if (request.method === 'POST' && url.pathname === '/v1/text-to-dialogue') {
      const inputs = Array.isArray(body?.inputs) ? (body.inputs as Array<{ text?: string; voice_id?: string }>) : [];
      if (inputs.length === 0 || inputs.some((i) => !i.text || !i.voice_id)) return validationError(response, ['inputs']);
      const text = inputs.map((i) => i.text).join('');
      return this.generate(request, response, url, inputs.map((i) => i.voice_id!), text, false);
    }
    detailError(response, 404, 'not_found', 'Not Found');
  }

  private behaviourFor(text: string): FakeElevenLabsBehaviour {
    const queued = this.queued.shift();
    if (queued) return queued;
    for (const [marker, behaviour] of MARKERS) {
      if (!text.includes(marker)) continue;
      if (text.includes(`${marker}-once`) && !this.once(`${marker}:${text}`)) continue;
      return behaviour;
    }
    return { kind: 'success' };
  }

  private async generate(request: IncomingMessage, response: ServerResponse, url: URL, voiceIds: string[], text: string, stream: boolean): Promise<void> {
    const behaviour = this.behaviourFor(text);
    const unknown = voiceIds.find((id) => !this.knows(id));
    if (unknown) return detailError(response, 400, 'voice_not_found', `A voice with the voice_id ${unknown} was not found.`);
    const format = url.searchParams.get('output_format') ?? 'mp3_44100_128';
    const audio = fakeAudio(text.length, format);
    const billed = behaviour.kind === 'success' && behaviour.billed !== undefined ? behaviour.billed : text.length;
    const headers = (which: 'both' | 'character-cost' | 'none' = 'both'): Record<string, string> => ({
      'content-type': CONTENT_TYPES[format] ?? 'application/octet-stream',
      'request-id': randomUUID().replace(/-/g, ''),
      'history-item-id': randomUUID().replace(/-/g, '').slice(0, 20),
      ...(which === 'both' && { 'x-character-count': String(billed) }),
      ...(which !== 'none' && { 'character-cost': String(billed) }),
    });
    switch (behaviour.kind) {
      case 'error': {
        const extra: Record<string, string> = behaviour.retryAfter ? { 'retry-after': behaviour.retryAfter } : {};
        return detailError(response, behaviour.status, behaviour.detailStatus, behaviour.message ?? behaviour.detailStatus, extra);
      }
      case 'validation':
        return validationError(response, behaviour.fields);
      case 'lose-answer':
        request.socket.destroy();
        return;
      case 'hang':
        return;
      case 'cut-body':
        response.writeHead(200, { ...headers(), 'content-length': String(audio.length) });
        response.write(audio.subarray(0, Math.floor(audio.length / 2)));
        await sleep(20);
        request.socket.destroy();
        return;
      case 'slow-stream':
        response.writeHead(200, headers());
        for (let i = 0; i < behaviour.chunks; i++) {
          response.write(Buffer.alloc(behaviour.chunkBytes, i + 1));
          await sleep(behaviour.pauseMs);
        }
        return; // and stall: the response is never ended
      case 'oversize': {
        response.writeHead(200, { ...headers(), ...(behaviour.declareLength && { 'content-length': String(behaviour.bytes) }) });
        const chunk = Buffer.alloc(64 * 1024, 7);
        for (let sent = 0; sent < behaviour.bytes && !response.destroyed; sent += chunk.length) {
          if (!response.write(chunk.subarray(0, Math.min(chunk.length, behaviour.bytes - sent)))) await waitDrainOrClose(response);
        }
        response.end();
        return;
      }
      case 'success':
        if (!stream) {
          response.writeHead(200, { ...headers(behaviour.billingHeaders), 'content-length': String(audio.length) }).end(audio);
          return;
        }
        response.writeHead(200, headers(behaviour.billingHeaders));
        for (let offset = 0; offset < audio.length; offset += 4096) {
          response.write(audio.subarray(offset, offset + 4096));
          await new Promise((resolve) => setImmediate(resolve));
        }
        response.end();
    }
  }

  private knows(voiceId: string): boolean {
    return this.library.some((v) => v.voice_id === voiceId) || this.account.some((v) => v.voice_id === voiceId);
  }

  private sharedVoices(url: URL, response: ServerResponse): void {
    const q = url.searchParams;
    const pageSize = Math.min(Number(q.get('page_size') ?? 30), 100);
    const page = Number(q.get('page') ?? 0);
    const search = q.get('search')?.toLowerCase();
    const matches = this.library.filter(
      (v) =>
        (!search || v.voice_id.toLowerCase() === search || (v.name ?? '').toLowerCase().includes(search)) &&
        (!q.get('language') || v.language === q.get('language')) &&
        (!q.get('gender') || v.gender === q.get('gender')) &&
        (!q.get('age') || v.age === q.get('age')) &&
        (q.get('include_custom_rates') !== 'false' || this.ignoreCustomRateFilter || (v.rate === undefined && v.fiat_rate === undefined)),
    );
    const voices = matches.slice(page * pageSize, (page + 1) * pageSize);
    json(response, 200, { voices, has_more: (page + 1) * pageSize < matches.length, total_count: matches.length, last_sort_id: null });
  }

  /** `/v2/voices`: `voice_ids` (repeatable) filter, pages of `page_size` (default 10) by `next_page_token`. */
  private ownVoices(url: URL, response: ServerResponse): void {
    const ids = url.searchParams.getAll('voice_ids');
    const category = url.searchParams.get('category');
    const matches = this.account.filter((v) => (ids.length === 0 || ids.includes(v.voice_id)) && (category === null || v.category === category));
    const pageSize = Math.min(Number(url.searchParams.get('page_size') ?? 10), 100);
    const start = Number(url.searchParams.get('next_page_token') ?? 0);
    const voices = matches.slice(start, start + pageSize);
    const more = start + pageSize < matches.length;
    json(response, 200, { voices, has_more: more, total_count: matches.length, next_page_token: more ? String(start + pageSize) : null });
  }

  private once(key: string): boolean {
    if (this.seenOnce.has(key)) return false;
    this.seenOnce.add(key);
    return true;
  }
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function detailError(response: ServerResponse, status: number, detailStatus: string, message: string, headers: Record<string, string> = {}): void {
  json(response, status, { detail: { status: detailStatus, message } }, headers);
}

function validationError(response: ServerResponse, fields: string[]): void {
  json(response, 422, { detail: fields.map((field) => ({ loc: ['body', field], msg: 'Field required: secret-looking value sk_abc', type: 'missing' })) });
}

/** The JSON body (null when empty), undefined when it is not JSON. */
function parseJson(raw: Buffer): any {
  if (raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function waitDrainOrClose(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}
