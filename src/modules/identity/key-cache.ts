import type { ApiKeyStatus, KeyEnvironment } from './api-key.entity.js';

/** What the guard needs of a key that exists: never the secret, never its hash. */
export interface CachedKey {
  id: string;
  workspaceId: string;
  environment: KeyEnvironment;
  status: ApiKeyStatus;
}

/** What an invalidation names: one key, every key of a workspace, or everything. */
export type KeyInvalidation = { keyId: string } | { workspaceId: string } | 'all';

/** Most keys one process remembers; past it the least recently used goes (about 2 MB at 10,000). */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

interface Entry {
  key: CachedKey;
  expiresAt: number;
}

/**
 * The per-process memory of verified API keys (docs/decisions.md › Platform, "Key cache with
 * instant revocation"), keyed by the hex SHA-256 of the secret.
 *
 * - Only keys that exist are kept (active or revoked): a client spraying random well-formed
 *   keys costs a lookup each, never memory. The size is capped; a Map keeps insertion order, a
 *   hit re-inserts its entry, so the first entry is the least recently used and goes first.
 * - Every entry lives `ttlMs` at most, the safety net when an invalidation is lost.
 * - Every invalidation moves the generation on. A lookup reads `generation` before it asks
 *   PostgreSQL and hands it back to `set`: a result read before an invalidation is dropped, so a
 *   revocation that lands while a lookup is in flight is never undone by that lookup's write.
 *
 * `ttlMs` 0 turns the cache off: nothing is kept.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private currentGeneration = 0;

  constructor(
    readonly ttlMs: number,
    private readonly now: () => number,
    readonly maxEntries = KEY_CACHE_MAX_ENTRIES,
  ) {
    if (!(ttlMs >= 0)) throw new RangeError('ttlMs must be 0 or more');
    if (!(maxEntries >= 1)) throw new RangeError('maxEntries must be at least 1');
  }

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Moves on at every invalidation; a write that carries an older one is dropped. */
  get generation(): number {
    return this.currentGeneration;
  }

  get(hash: string): CachedKey | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    // Most recently used goes last, so eviction takes the first.
    this.entries.delete(hash);
    this.entries.set(hash, entry);
    return entry.key;
  }

  /** Keeps `key` unless an invalidation happened since `generation` was read; true when kept. */
  set(hash: string, key: CachedKey, generation: number): boolean {
    if (!this.enabled || generation !== this.currentGeneration) return false;
    this.entries.delete(hash);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(hash, { key, expiresAt: this.now() + this.ttlMs });
    return true;
  }

  /** Forgets what the invalidation names (a scan: invalidations are rare, the cache is bounded). */
  invalidate(what: KeyInvalidation): void {
    this.currentGeneration++;
    if (what === 'all') {
      this.entries.clear();
      return;
    }
    const matches = 'keyId' in what ? (key: CachedKey) => key.id === what.keyId : (key: CachedKey) => key.workspaceId === what.workspaceId;
    for (const [hash, entry] of this.entries) if (matches(entry.key)) this.entries.delete(hash);
  }

  clear(): void {
    this.invalidate('all');
  }
}

/** The wire form on the invalidation channel: `key:<id>`, `workspace:<id>`, or `all`. */
export function encodeInvalidation(what: KeyInvalidation): string {
  if (what === 'all') return 'all';
  return 'keyId' in what ? `key:${what.keyId}` : `workspace:${what.workspaceId}`;
}

/** Anything not understood reads as `all`: forgetting too much is only a few lookups. */
export function decodeInvalidation(message: string): KeyInvalidation {
  const match = /^(key|workspace):(\S+)$/.exec(message);
  if (!match) return 'all';
  return match[1] === 'key' ? { keyId: match[2]! } : { workspaceId: match[2]! };
}
