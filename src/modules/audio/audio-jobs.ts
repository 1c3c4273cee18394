/** Audio's queue (registered by AudioModule through `QueueModule.forFeature`) and its one job. */
export const AUDIO_QUEUE = 'audio';
/** Moves one audio task forward (synthesize, store, settle); re-delays itself while reconciling or watching a stream. */
export const AUDIO_PROCESS_JOB = 'audio.process';

declare module '../../queue/queue-names.js' {
  interface JobPayloads {
    'audio.process': { taskId: string };
  }
}
