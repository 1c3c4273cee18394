import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { ProviderAdapterFor, SANDBOX_ADAPTER } from '../capabilities.js';
import { parseSandboxDirectives } from '../sandbox/directives.js';
import { FfmpegPresence } from '../sandbox/ffmpeg-presence.js';
import {
  frameSize,
  type LookupOutcome,
  type PollOutcome,
  type SubmitOutcome,
  type VideoGenerationRequest,
  type VideoJobSpec,
  type VideoOutputRef,
  type VideoProvider,
  VideoDownloadError,
  VIDEO_MODEL_IDS,
} from './video-provider.js';

export interface SandboxVideoOptions {
  /** Path of an ffmpeg binary with libx264 and aac. */
  ffmpegPath: string | null;
}

/** Operation names carry the task id and the submit time, so the sandbox keeps no state. */
const OPERATION = /^sandbox\/operations\/(omni:[0-9a-f-]{36})\/(\d{1,15})$/;

/**
 * The in-process video "upstream" (DESIGN §1, §4a): deterministic, needs no credentials, and
 * returns a real playable MP4 (H.264 + AAC, faststart) at the requested size and duration.
 * Stateless on purpose: an operation name encodes what polling needs, so a worker restart or a
 * second worker sees the same job. Directives: `[sandbox:fail]`, `[sandbox:delay=<ms>]`,
 * `[sandbox:uncertain]` (the acceptance answer is "lost"; lookup finds the job).
 */
@ProviderAdapterFor('video')
export class SandboxVideoProvider implements VideoProvider {
  readonly name = SANDBOX_ADAPTER;
  readonly live = false;
  readonly models = VIDEO_MODEL_IDS;
  readonly reconcileDelayMs = 250;
  readonly reconcileGiveUpMs = 60_000;
  /** Submissions seen per task in this process (tests assert "never sent again"). */
  readonly submissions = new Map<string, number>();

  private readonly ffmpeg: FfmpegPresence;

  constructor(private readonly options: SandboxVideoOptions) {
    this.ffmpeg = new FfmpegPresence(options.ffmpegPath);
  }

  credentialled(): boolean {
    return true;
  }

  available(): boolean {
    return this.ffmpeg.available;
  }

  async submit(request: VideoGenerationRequest): Promise<SubmitOutcome> {
    this.submissions.set(request.taskId, (this.submissions.get(request.taskId) ?? 0) + 1);
    const directives = parseSandboxDirectives(request.prompt);
    const operation = `sandbox/operations/${request.taskId}/${Date.now()}`;
    if (directives.uncertain) return { kind: 'uncertain', reason: 'sandbox: the acceptance answer was lost' };
    return { kind: 'accepted', operation };
  }

  async lookup(spec: VideoJobSpec): Promise<LookupOutcome> {
    // Everything the sandbox was sent, it accepted: the job is found under its task id (its
    // simulated latency counts from the lookup).
    return { kind: 'found', operation: `sandbox/operations/${spec.taskId}/${Date.now()}` };
  }

  async poll(operation: string, spec: VideoJobSpec): Promise<PollOutcome> {
    const match = OPERATION.exec(operation);
    if (!match || match[1] !== spec.taskId) return { kind: 'failed', reason: 'sandbox: unknown operation' };
    const directives = parseSandboxDirectives(spec.prompt);
    const remaining = Number(match[2]) + directives.delayMs - Date.now();
    if (remaining > 0) return { kind: 'running', retryAfterMs: remaining };
    if (directives.fail) return { kind: 'failed', reason: 'the upstream failed to generate the video (sandbox:fail)' };
    return { kind: 'succeeded', output: { uri: operation, mimeType: 'video/mp4' } };
  }

  async download(_output: VideoOutputRef, spec: VideoJobSpec, destPath: string): Promise<{ bytes: number }> {
    if (!this.available()) throw new VideoDownloadError('sandbox: ffmpeg is not available', true);
    await renderTestClip(this.options.ffmpegPath!, spec, destPath);
    return { bytes: (await stat(destPath)).size };
  }
}

/**
 * A testsrc2 picture with a sine tone, H.264 + AAC, `+faststart`, at the requested size. Larger
 * sizes are drawn at 720p and upscaled (drawing testsrc2 at 4K costs 3× more than the scaling),
 * at a lower frame rate: a 10-second 4K clip takes ~1.7 s here instead of ~20 s.
 */
export async function renderTestClip(ffmpegPath: string, spec: Pick<VideoJobSpec, 'durationSeconds' | 'resolution' | 'ratio'>, destPath: string): Promise<void> {
  const { width, height } = frameSize(spec.resolution, spec.ratio);
  const drawn = spec.resolution === '4k' || spec.resolution === '1080p' ? frameSize('720p', spec.ratio) : { width, height };
  const fps = spec.resolution === '4k' ? 6 : spec.resolution === '1080p' ? 12 : 24;
  const seconds = spec.durationSeconds;
  const upscale = drawn.width === width ? [] : ['-vf', `scale=${width}:${height}:flags=neighbor`];
  const args = [
    '-hide_banner', '-loglevel', 'error', '-nostdin', '-y',
    '-f', 'lavfi', '-i', `testsrc2=size=${drawn.width}x${drawn.height}:rate=${fps}:duration=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-map', '0:v', '-map', '1:a', ...upscale,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'fastdecode', '-pix_fmt', 'yuv420p', '-g', String(fps * 2),
    '-c:a', 'aac', '-b:a', '96k', '-ac', '2',
    '-t', String(seconds),
    '-movflags', '+faststart',
    '-f', 'mp4', destPath,
  ];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => reject(new VideoDownloadError(`sandbox: ffmpeg did not start: ${error.message}`, true)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new VideoDownloadError(`sandbox: ffmpeg exited with ${code ?? signal}: ${stderr.trim().slice(0, 500)}`, true));
    });
  });
}
