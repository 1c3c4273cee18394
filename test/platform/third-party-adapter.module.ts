import { Module } from '@nestjs/common';
import {
  type LookupOutcome,
  type PollOutcome,
  ProviderAdapterFor,
  SandboxVideoProvider,
  type SubmitOutcome,
  type VideoGenerationRequest,
  type VideoJobSpec,
  type VideoOutputRef,
  type VideoProvider,
} from '../../libs/providers/index.js';
import { ffmpegPath } from '../video/support/media-fixtures.js';

export const THIRD_PARTY_VIDEO = 'acme-video';
/** The one model this vendor serves; route it with PROVIDER_ROUTES=<model>:acme-video. */
export const THIRD_PARTY_MODEL = 'vendor-omni-1.1-flash-preview';

/**
 * TEST-ONLY: a third video adapter contributed by a module outside src/, the way an extension
 * adds an upstream: a class marked `@ProviderAdapterFor('video')`, provided by its own module,
 * imported next to the app's modules. It is "live" and credentialled; its wire is imitated by
 * rendering locally with the sandbox's renderer, and it counts the jobs it was sent.
 */
@ProviderAdapterFor('video')
export class ThirdPartyVideoAdapter implements VideoProvider {
  readonly name = THIRD_PARTY_VIDEO;
  readonly live = true;
  readonly models = [THIRD_PARTY_MODEL];
  readonly reconcileDelayMs = 250;
  readonly reconcileGiveUpMs = 60_000;
  /** Task ids submitted to this adapter, in order. */
  readonly submitted: string[] = [];

  constructor(private readonly renderer: SandboxVideoProvider) {}

  credentialled(): boolean {
    return true;
  }

  available(): boolean {
    return this.renderer.available();
  }

  submit(request: VideoGenerationRequest): Promise<SubmitOutcome> {
    this.submitted.push(request.taskId);
    return this.renderer.submit(request);
  }

  lookup(spec: VideoJobSpec): Promise<LookupOutcome> {
    return this.renderer.lookup(spec);
  }

  poll(operation: string, spec: VideoJobSpec): Promise<PollOutcome> {
    return this.renderer.poll(operation, spec);
  }

  download(output: VideoOutputRef, spec: VideoJobSpec, destPath: string): Promise<{ bytes: number }> {
    return this.renderer.download(output, spec, destPath);
  }
}

@Module({
  providers: [
    {
      provide: ThirdPartyVideoAdapter,
      useFactory: async () => new ThirdPartyVideoAdapter(new SandboxVideoProvider({ ffmpegPath: await ffmpegPath() })),
    },
  ],
})
export class ThirdPartyVideoModule {}
