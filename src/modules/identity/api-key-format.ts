import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { KeyEnvironment } from './api-key.entity.js';

/**
 * API keys (DESIGN §4a): `svc_live_` or `svc_test_`, 32 random base62 characters, then a
 * 6-character base62 CRC32 of everything before it (GitHub's token scheme). A mistyped or
 * truncated key fails the checksum and is refused before any database lookup.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = /^svc_(live|test)_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

/** How many characters of a key are shown to people (`svc_live_AbCd…`). */
const SHOWN_PREFIX_LENGTH = 13;

function toBase62(value: number, width: number): string {
  let out = '';
  let rest = value;
  do {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return out.padStart(width, '0');
}

export function checksumOf(body: string): string {
  return toBase62(crc32(body), CHECKSUM_LENGTH);
}

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  secretSha256: Buffer;
}

export function generateApiKey(environment: KeyEnvironment): GeneratedApiKey {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  const body = `svc_${environment}_${random}`;
  const key = body + checksumOf(body);
  return { key, prefix: key.slice(0, SHOWN_PREFIX_LENGTH), secretSha256: hashApiKey(key) };
}

export type ParsedApiKey = { ok: true; environment: KeyEnvironment; sha256: Buffer } | { ok: false; reason: string };

/** Checks shape and checksum without touching storage. */
export function parseApiKey(candidate: string): ParsedApiKey {
  const match = KEY_PATTERN.exec(candidate);
  if (!match) return { ok: false, reason: 'malformed API key' };
  const body = candidate.slice(0, candidate.length - CHECKSUM_LENGTH);
  if (checksumOf(body) !== match[3]) return { ok: false, reason: 'malformed API key (checksum mismatch)' };
  return { ok: true, environment: match[1] as KeyEnvironment, sha256: hashApiKey(candidate) };
}

export function hashApiKey(key: string): Buffer {
  // One-shot: no Hash object per request (every authenticated request hashes its key, cache hit or not).
  return hash('sha256', key, 'buffer');
}
