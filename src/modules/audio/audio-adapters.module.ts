// STAND-IN for the coordinator's AudioAdaptersModule (take main's version at merge): provides the
// sandbox adapter so the provider registry finds it and the audio suites can run.
import { Module } from '@nestjs/common';
import { bundledFfmpegPath, SandboxAudioProvider } from '../../../libs/providers/index.js';

@Module({
  providers: [{ provide: SandboxAudioProvider, useFactory: () => new SandboxAudioProvider({ ffmpegPath: bundledFfmpegPath() }) }],
  exports: [SandboxAudioProvider],
})
export class AudioAdaptersModule {}
