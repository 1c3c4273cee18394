/**
 * Media keys name stored objects (`video/<workspaceId>/<taskId>.mp4`). They become file paths
 * and URL paths, so they are held to a small safe alphabet: segments of `A-Z a-z 0-9 . _ : -`
 * separated by single `/`, no segment starting with a dot (so no `.`/`..`, no dotfiles, and the
 * driver's own `.tmp` folder cannot be named), no absolute path, and no first segment `public`
 * (that path belongs to public links). A bad key is a programming error, not a client error.
 */
const SEGMENT = /^[A-Za-z0-9_:-][A-Za-z0-9._:-]*$/;
export const MAX_MEDIA_KEY_LENGTH = 512;

export class InvalidMediaKeyError extends Error {
  constructor(key: unknown, why: string) {
    super(`invalid media key ${JSON.stringify(key)}: ${why}`);
    this.name = 'InvalidMediaKeyError';
  }
}

/** Why `key` is not a valid media key, or null when it is. */
export function mediaKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return 'must be a string';
  if (key.length === 0 || key.length > MAX_MEDIA_KEY_LENGTH) return `must be 1-${MAX_MEDIA_KEY_LENGTH} characters`;
  const segments = key.split('/');
  if (segments[0] === 'public') return 'must not start with "public/" (reserved for public links)';
  for (const segment of segments) {
    if (segment === '') return 'must not be absolute, end with "/" or contain "//"';
    if (!SEGMENT.test(segment)) return `segment ${JSON.stringify(segment)} must be A-Z a-z 0-9 . _ : - and not start with "."`;
  }
  return null;
}

export function isValidMediaKey(key: unknown): key is string {
  return mediaKeyProblem(key) === null;
}

export function assertValidMediaKey(key: unknown): asserts key is string {
  const problem = mediaKeyProblem(key);
  if (problem !== null) throw new InvalidMediaKeyError(key, problem);
}
