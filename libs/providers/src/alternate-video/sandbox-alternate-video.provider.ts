import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { Logger } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { ProviderAdapterFor, SANDBOX_ADAPTER } from '../capabilities.js';
import { parseSandboxDirectives } from '../sandbox/directives.js';
import { FfmpegPresence } from '../sandbox/ffmpeg-presence.js';
import { renderTestClip } from '../video/sandbox-video.provider.js';
import {
  ALTERNATE_VIDEO_CAPABILITY,
  ALTERNATE_VIDEO_MODEL_IDS,
  type AlternateCreateOutcome,
  type AlternateCreateRequest,
  AlternateDownloadError,
  type AlternateJobSpec,
  type AlternateObservation,
  type AlternateQueryOutcome,
  type AlternateVideoProvider,
} from './alternate-video-provider.js';

export interface SandboxAlternateOptions {
  ffmpegPath: string | null;
  /** The secret the self-callback is signed with (`whsec_…`); null: no callbacks. */
  callbackSecret: string | null;
}

/** Upstream task ids carry our task's uuid and the create time, so the sandbox keeps no state. */
const TASK_ID = /^sandbox-(\d{1,15})-([0-9a-f-]{36})$/;
/** Upstream HTTP status per Kling code (upstreams.md §3.4), for a `[sandbox:reject=<code>]`. */
function klingHttpStatus(code: number): number {
  if (code >= 1000 && code <= 1004) return 401;
  if ((code >= 1100 && code <= 1102) || (code >= 1302 && code <= 1304)) return 429;
  if (code === 1103) return 403;
  if (code === 1202 || code === 1203) return 404;
  if (code === 5001) return 503;
  if (code === 5002) return 504;
  if (code >= 5000) return 500;
  return 400;
}

/**
 * The in-process alternate provider (DESIGN §1, §4a): accepts the same bodies as Kling, answers
 * `[sandbox:reject=<code>]` with that upstream code, `[sandbox:uncertain]` loses the create
 * answer (the lookup by our id finds the task), `[sandbox:delay=<ms>]` and `[sandbox:fail]` as
 * for video; the finished video is a real MP4 of the requested duration and ratio, rendered by the
 * omni sandbox's renderer. When a callback URL is given it also posts the terminal task object,
 * signed the Standard Webhooks way, to that URL (our own callback route), so polling and
 * callbacks both run out of the box. The callback is best effort: if it is lost, polling wins.
 */
@ProviderAdapterFor(ALTERNATE_VIDEO_CAPABILITY)
export class SandboxAlternateVideoProvider implements AlternateVideoProvider {
  readonly name = SANDBOX_ADAPTER;
  readonly live = false;
  readonly models = ALTERNATE_VIDEO_MODEL_IDS;
  readonly reconcileDelayMs = 250;
  readonly reconcileGiveUpMs = 60_000;
  /** Creates seen per task in this process (tests assert "never created twice"). */
  readonly creates = new Map<string, number>();
  private readonly logger = new Logger('SandboxAlternateVideo');
  private readonly timers = new Set<NodeJS.Timeout>();

  private readonly ffmpeg: FfmpegPresence;

  constructor(private readonly options: SandboxAlternateOptions) {
    this.ffmpeg = new FfmpegPresence(options.ffmpegPath);
  }

  credentialled(): boolean {
    return true;
  }

  available(): boolean {
    return this.ffmpeg.available;
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  async create(request: AlternateCreateRequest): Promise<AlternateCreateOutcome> {
    const directives = parseSandboxDirectives(request.prompt);
    if (directives.rejectCode !== null) return { kind: 'refused', upstreamCode: directives.rejectCode, httpStatus: klingHttpStatus(directives.rejectCode) };
    this.creates.set(request.taskId, (this.creates.get(request.taskId) ?? 0) + 1);
    const upstreamTaskId = `sandbox-${Date.now()}-${uuidOf(request.taskId)}`;
    if (directives.uncertain) return { kind: 'uncertain', reason: 'sandbox: the create answer was lost' };
    if (request.callbackUrl && this.options.callbackSecret) this.scheduleCallback(request, upstreamTaskId, directives.delayMs);
    return { kind: 'accepted', upstreamTaskId };
  }

  async query(spec: AlternateJobSpec, upstreamTaskId: string): Promise<AlternateQueryOutcome> {
    const task = this.observe(spec, upstreamTaskId);
    return task ? { kind: 'found', task } : { kind: 'not_found' };
  }

  async queryByExternalId(spec: AlternateJobSpec): Promise<AlternateQueryOutcome> {
    // Everything the sandbox was sent, it created: found under our id (its latency counts from here).
    const task = this.observe(spec, `sandbox-${Date.now()}-${uuidOf(spec.taskId)}`);
    return task ? { kind: 'found', task } : { kind: 'not_found' };
  }

  async download(_videoUrl: string, spec: AlternateJobSpec, destPath: string): Promise<{ bytes: number }> {
    if (!this.available()) throw new AlternateDownloadError('sandbox: ffmpeg is not available', true);
    try {
      await renderTestClip(this.options.ffmpegPath!, { durationSeconds: spec.durationSeconds, resolution: '720p', ratio: spec.aspectRatio === '9:16' ? '9:16' : '16:9' }, destPath);
    } catch (error) {
      throw new AlternateDownloadError(error instanceof Error ? error.message : String(error), true);
    }
    return { bytes: (await stat(destPath)).size };
  }

  pollDelayMs(spec: AlternateJobSpec, _pollAttempt: number, submittedAt: Date): number {
    // When the simulated generation ends (at least 100 ms, at most 5 s ahead).
    const remaining = submittedAt.getTime() + parseSandboxDirectives(spec.prompt).delayMs - Date.now();
    return Math.max(100, Math.min(remaining, 5000));
  }

  private observe(spec: AlternateJobSpec, upstreamTaskId: string): AlternateObservation | null {
    const match = TASK_ID.exec(upstreamTaskId);
    if (!match || match[2] !== uuidOf(spec.taskId)) return null;
    const directives = parseSandboxDirectives(spec.prompt);
    const base = { upstreamTaskId, externalTaskId: spec.taskId };
    if (Number(match[1]) + directives.delayMs > Date.now()) return { ...base, status: 'processing' };
    if (directives.fail) return { ...base, status: 'failed', message: 'sandbox:fail' };
    return { ...base, status: 'succeed', videoUrl: `sandbox://videos/${upstreamTaskId}.mp4`, videoSeconds: spec.durationSeconds };
  }

  private scheduleCallback(request: AlternateCreateRequest, upstreamTaskId: string, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.sendCallback(request, upstreamTaskId);
    }, delayMs + 50);
    timer.unref();
    this.timers.add(timer);
  }

  private async sendCallback(request: AlternateCreateRequest, upstreamTaskId: string): Promise<void> {
    const task = this.observe(request, upstreamTaskId);
    if (!task) return;
    const now = Date.now();
    const payload = JSON.stringify({
      task_id: upstreamTaskId,
      task_status: task.status,
      task_status_msg: task.message ?? '',
      created_at: now,
      updated_at: now,
      task_info: { external_task_id: request.taskId },
      task_result: { videos: task.videoUrl ? [{ id: upstreamTaskId, url: task.videoUrl, duration: String(request.durationSeconds) }] : [] },
    });
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const signature = new Webhook(this.options.callbackSecret!).sign(id, at, payload);
    try {
      const response = await fetch(request.callbackUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature },
        body: payload,
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      if (response.status !== 200) this.logger.warn(`sandbox callback for ${request.taskId} answered ${response.status}`);
    } catch (error) {
      // PUBLIC_BASE_URL not reachable from here: polling finishes the task.
      this.logger.debug?.(`sandbox callback for ${request.taskId} not delivered: ${String(error)}`);
    }
  }
}

const uuidOf = (taskId: string): string => taskId.slice(taskId.indexOf(':') + 1);
