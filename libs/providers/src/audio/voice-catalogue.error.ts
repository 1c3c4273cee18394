/**
 * The upstream's voice catalogue could not be read (unreachable, refused, unreadable answer).
 * Thrown by `listVoices`/`getVoice` of live adapters; the message is ours, safe to show, and
 * callers answer it as the domain's 503 (the catalogue is unavailable, not the voice unknown).
 */
export class VoiceCatalogueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VoiceCatalogueError';
  }
}
