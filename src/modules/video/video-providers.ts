import { Injectable } from '@nestjs/common';
import type { VideoProvider } from '../../../libs/providers/index.js';

/**
 * The video adapters by name. A task keeps the adapter chosen at creation, so the worker looks
 * it up here rather than re-routing (credentials may change between creation and processing).
 */
@Injectable()
export class VideoProviders {
  private readonly byName = new Map<string, VideoProvider>();

  add(provider: VideoProvider): void {
    this.byName.set(provider.name, provider);
  }

  get(name: string): VideoProvider {
    const provider = this.byName.get(name);
    if (!provider) throw new Error(`no video adapter named ${name}`);
    return provider;
  }
}
