import { createHmac, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { bundledFfmpegPath, renderTestClip } from '../../libs/providers/index.js';

/** HTTP status of each Kling service code (upstreams.md §3.4). */
export function klingStatusOf(code: number): number {
  if (code >= 1000 && code <= 1004) return 401;
  if ((code >= 1100 && code <= 1102) || (code >= 1302 && code <= 1304)) return 429;
  if (code === 1103) return 403;
  if (code === 1202 || code === 1203) return 404;
  if (code === 5001) return 503;
  if (code === 5002) return 504;
  if (code >= 5000) return 500;
  return 400;
}

export type FakeCreateAction = { refuse: number } | 'lose' | 'accept';

export interface FakeKlingTask {
  taskId: string;
  externalTaskId: string | null;
  kind: 'text2video' | 'image2video';
  body: Record<string, any>;
  status: 'submitted' | 'processing' | 'succeed' | 'failed';
  queries: number;
  createdAt: number;
}

export interface JwtClaims {
  iss: string;
  exp: number;
  nbf: number;
}

/**
 * A fake Kling API (upstreams.md §3) speaking its wire format, for the `kling` adapter and the
 * alternate-video suites:
 * - every request must carry `Authorization: Bearer <JWT>` HS256-signed with the secret key,
 *   `iss` the access key, `nbf` not in the future, `exp` not past and at most 30 min ahead
 *   (1001 empty, 1002 invalid, 1003 not yet valid, 1004 expired; HTTP 401);
 * - `POST /v1/videos/text2video|image2video` creates a task (`external_task_id` unique: a
 *   repeat answers 1201), or follows `createScript`: `{refuse: code}` answers that code with its
 *   HTTP status, `'lose'` creates the task and destroys the connection unanswered;
 * - `GET /v1/videos/{kind}/{task_id or external_task_id}` answers the task (404 code 1203 when
 *   unknown); with `finishOnQuery` the second query of a task finds it `succeed`, else the task
 *   stays `processing` until `finish()`;
 * - `GET /videos/{task_id}.mp4` serves a real MP4 of the asked duration (held while `holdDownloads`);
 * - `callback()` posts the task object to its `callback_url`, signed the Standard Webhooks way.
 */
export class FakeKlingServer {
  readonly accessKey = 'fake-access-key';
  readonly secretKey = 'fake-secret-key-0123456789';
  baseUrl = '';
  readonly tasks = new Map<string, FakeKlingTask>();
  readonly creates: Array<{ kind: string; body: Record<string, any>; claims: JwtClaims }> = [];
  readonly queries: Array<{ id: string; claims: JwtClaims }> = [];
  readonly authFailures: number[] = [];
  readonly downloads: string[] = [];
  /** Every request as `METHOD path` (to show what was, and was not, asked of the upstream). */
  readonly requests: string[] = [];
  createScript: FakeCreateAction[] = [];
  finishOnQuery = true;
  /** While true, queries report a finished task as still `processing` (only a callback tells). */
  queriesHideTerminal = false;
  /** While set, video downloads send half the file and wait for it before the rest. */
  holdDownloads: Promise<void> | null = null;
  private server!: Server;
  private dir = '';
  private readonly clips = new Map<number, Buffer>();

  async start(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'fake-kling-'));
    this.server = createServer((request, response) => {
      void this.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }

  byExternal(externalTaskId: string): FakeKlingTask | undefined {
    return [...this.tasks.values()].find((t) => t.externalTaskId === externalTaskId);
  }

  finish(externalTaskId: string, status: 'succeed' | 'failed' = 'succeed'): FakeKlingTask {
    const task = this.byExternal(externalTaskId);
    if (!task) throw new Error(`no fake task for ${externalTaskId}`);
    task.status = status;
    return task;
  }

  /** The task object as Kling sends it in query answers and callbacks. */
  taskObject(task: FakeKlingTask): Record<string, unknown> {
    const duration = String(task.body.duration ?? '5');
    return {
      task_id: task.taskId,
      task_status: task.status,
      task_status_msg: task.status === 'failed' ? 'Failure to pass the risk control system' : '',
      created_at: task.createdAt,
      updated_at: Date.now(),
      task_info: task.externalTaskId ? { external_task_id: task.externalTaskId } : {},
      task_result: task.status === 'succeed' ? { videos: [{ id: `v${task.taskId}`, url: `${this.baseUrl}/videos/${task.taskId}.mp4`, duration }] } : {},
    };
  }

  /**
   * Signs and posts a callback for the task. `secrets` sign one `v1,` signature each (space
   * separated); `timestamp` (unix seconds) defaults to now; `tamper` changes the body after signing.
   */
  async callback(
    externalTaskId: string,
    options: { url?: string; secrets: string[]; webhookId?: string; timestamp?: number; tamper?: boolean; unsigned?: boolean; body?: Record<string, unknown> },
  ): Promise<{ status: number; body: any }> {
    const task = this.byExternal(externalTaskId);
    const payload = JSON.stringify(options.body ?? (task ? this.taskObject(task) : {}));
    const url = options.url ?? task?.body.callback_url;
    const id = options.webhookId ?? `msg_${randomUUID()}`;
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const signatures = options.secrets.map((secret) => new Webhook(secret).sign(id, new Date(timestamp * 1000), payload)).join(' ');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!options.unsigned) Object.assign(headers, { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures });
    const sent = options.tamper ? payload.replace('"task_status"', '"task_status" ') : payload;
    const response = await fetch(url, { method: 'POST', headers, body: sent });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.baseUrl);
    this.requests.push(`${request.method} ${url.pathname}`);
    const body = await readBody(request);
    const video = /^\/videos\/([^/]+)\.mp4$/.exec(url.pathname);
    if (request.method === 'GET' && video) return this.serveVideo(video[1]!, response);
    const claims = this.authenticate(request.headers.authorization, response);
    if (!claims) return;
    const create = /^\/v1\/videos\/(text2video|image2video)$/.exec(url.pathname);
    if (request.method === 'POST' && create) return this.create(create[1] as FakeKlingTask['kind'], body, claims, request, response);
    const query = /^\/v1\/videos\/(text2video|image2video)\/([^/]+)$/.exec(url.pathname);
    if (request.method === 'GET' && query) return this.query(decodeURIComponent(query[2]!), claims, response);
    return error(response, 1202);
  }

  private authenticate(header: string | undefined, response: ServerResponse): JwtClaims | null {
    const fail = (code: number) => {
      this.authFailures.push(code);
      error(response, code);
      return null;
    };
    if (!header) return fail(1001);
    const token = /^Bearer (.+)$/.exec(header)?.[1];
    const parts = token?.split('.');
    if (!parts || parts.length !== 3) return fail(1002);
    const [head, payload, signature] = parts as [string, string, string];
    const expected = createHmac('sha256', this.secretKey).update(`${head}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return fail(1002);
    let claims: JwtClaims;
    try {
      const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
      if (header.alg !== 'HS256' || header.typ !== 'JWT') return fail(1002);
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return fail(1002);
    }
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== this.accessKey || typeof claims.exp !== 'number' || typeof claims.nbf !== 'number') return fail(1002);
    if (claims.nbf > now) return fail(1003);
    if (claims.exp <= now) return fail(1004);
    if (claims.exp - now > 1800) return fail(1002);
    return claims;
  }

  private create(kind: FakeKlingTask['kind'], text: string, claims: JwtClaims, request: IncomingMessage, response: ServerResponse): void {
    let body: Record<string, any>;
    try {
      body = JSON.parse(text);
    } catch {
      return error(response, 1200);
    }
    this.creates.push({ kind, body, claims });
    const action = this.createScript.shift() ?? 'accept';
    if (typeof action === 'object') return error(response, action.refuse);
    if (typeof body.prompt !== 'string' || !['5', '10'].includes(body.duration) || !['std', 'pro'].includes(body.mode)) return error(response, 1201);
    if (kind === 'image2video' && !body.image && !body.image_tail) return error(response, 1201);
    if (body.external_task_id && this.byExternal(body.external_task_id)) return error(response, 1201);
    const task: FakeKlingTask = {
      taskId: String(randomInt(1e11, 1e12)),
      externalTaskId: body.external_task_id ?? null,
      kind,
      body,
      status: 'submitted',
      queries: 0,
      createdAt: Date.now(),
    };
    this.tasks.set(task.taskId, task);
    if (action === 'lose') {
      request.socket.destroy();
      return;
    }
    json(response, 200, {
      code: 0,
      message: 'SUCCEED',
      request_id: randomUUID(),
      data: { task_id: task.taskId, task_info: { external_task_id: task.externalTaskId }, task_status: 'submitted', created_at: task.createdAt, updated_at: task.createdAt },
    });
  }

  private query(id: string, claims: JwtClaims, response: ServerResponse): void {
    this.queries.push({ id, claims });
    const task = this.tasks.get(id) ?? this.byExternal(id);
    if (!task) return error(response, 1203);
    task.queries += 1;
    if (task.status === 'submitted') task.status = 'processing';
    else if (task.status === 'processing' && this.finishOnQuery && task.queries >= 2) task.status = 'succeed';
    const data = this.queriesHideTerminal && (task.status === 'succeed' || task.status === 'failed') ? { ...this.taskObject({ ...task, status: 'processing' }) } : this.taskObject(task);
    json(response, 200, { code: 0, message: 'SUCCEED', request_id: randomUUID(), data });
  }

  private async serveVideo(taskId: string, response: ServerResponse): Promise<void> {
    const task = this.tasks.get(taskId);
    if (!task || task.status !== 'succeed') return error(response, 1203);
    this.downloads.push(taskId);
    const clip = await this.clip(Number(task.body.duration ?? 5));
    response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(clip.length) });
    if (this.holdDownloads) {
      const half = Math.floor(clip.length / 2);
      response.write(clip.subarray(0, half));
      await this.holdDownloads;
      if (response.destroyed) return;
      response.end(clip.subarray(half));
      return;
    }
    response.end(clip);
  }

  private async clip(seconds: number): Promise<Buffer> {
    let clip = this.clips.get(seconds);
    if (!clip) {
      const path = join(this.dir, `${seconds}.mp4`);
      await renderTestClip(bundledFfmpegPath()!, { durationSeconds: seconds, resolution: '360p', ratio: '16:9' }, path);
      clip = await readFile(path);
      this.clips.set(seconds, clip);
    }
    return clip;
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }).end(text);
}

function error(response: ServerResponse, code: number): void {
  json(response, klingStatusOf(code), { code, message: `fake error ${code}`, request_id: randomUUID() });
}
