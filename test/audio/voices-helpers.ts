import assert from 'node:assert/strict';
import { SANDBOX_VOICES, type VoiceInfo } from '../../libs/providers/index.js';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';

/** The sandbox catalogue split the way every voice route must treat it. */
export const usableVoices = (): VoiceInfo[] => SANDBOX_VOICES.filter((voice) => voice.status === 'available' && voice.standardRate);
export const refusedVoices = (): VoiceInfo[] => SANDBOX_VOICES.filter((voice) => voice.status !== 'available' || !voice.standardRate);

export function voiceWhere(predicate: (voice: VoiceInfo) => boolean, what: string): VoiceInfo {
  const voice = SANDBOX_VOICES.find(predicate);
  assert.ok(voice, `the sandbox catalogue has ${what}`);
  return voice;
}

export const privateVoice = (): VoiceInfo => voiceWhere((v) => v.status === 'private', 'a private voice');
export const removedVoice = (): VoiceInfo => voiceWhere((v) => v.status === 'removed', 'a removed voice');
export const customRateVoice = (): VoiceInfo => voiceWhere((v) => v.status === 'available' && !v.standardRate, 'a custom-rate voice');
export const notTurboVoice = (): VoiceInfo =>
  voiceWhere((v) => v.status === 'available' && v.standardRate && !v.models.includes('voice_v4_turbo'), 'a usable voice that does not speak voice_v4_turbo');
/** Well-formed (20 base62 characters) but in no catalogue. */
export const UNKNOWN_VOICE_ID = 'Zz0000000000000000Zz';

/** The fields every voice resource shows (the voice library and saved voices add their own). */
export interface VoiceView {
  id: string;
  name: string;
  status: string;
  models: string[];
  previewUrl?: string;
  description: string;
  language: string;
  accent: string;
  category: string;
}

export interface WalletFigures {
  wallet: unknown;
  ledgerEntries: number;
  holds: number;
}

/** What a refused or free request must leave untouched: the wallet answer, the ledger and the holds. */
export async function walletFigures(t: TestApp, account: TestAccount): Promise<WalletFigures> {
  const answer = await t.request('/api/svc/v1/wallet', { key: account.key });
  assert.equal(answer.status, 200);
  const [ledger] = await t.db.query<{ n: string }>('SELECT count(*) AS n FROM ledger_entry WHERE workspace_id = $1', [account.workspaceId]);
  const [holds] = await t.db.query<{ n: string }>('SELECT count(*) AS n FROM hold WHERE workspace_id = $1', [account.workspaceId]);
  return { wallet: await answer.json(), ledgerEntries: Number(ledger!.n), holds: Number(holds!.n) };
}

export interface SavedVoiceRow {
  voice_id: string;
  alias: string | null;
  created_at: Date;
}

export const savedVoiceRows = (t: TestApp, account: TestAccount): Promise<SavedVoiceRow[]> =>
  t.db.query<SavedVoiceRow>('SELECT voice_id, alias, created_at FROM saved_voice WHERE api_key_id = $1 ORDER BY voice_id', [account.keyId]);

/** `{error:{code,message}}` with the expected status and code. */
export async function assertError(answer: Response, status: number, code: string): Promise<void> {
  const body = (await answer.json()) as { error?: { code?: unknown; message?: unknown } };
  assert.equal(answer.status, status, JSON.stringify(body));
  assert.equal(body.error?.code, code, JSON.stringify(body));
  assert.equal(typeof body.error?.message, 'string');
  assert.ok((body.error?.message as string).length > 0);
}

/**
 * Walks the MP3's frames from the first sync word (after an ID3v2 tag, if any) to the end:
 * every frame must be MPEG-1 Layer III at 44.1 kHz. Returns the number of frames.
 */
export function mp3Frames(bytes: Buffer): number {
  let offset = 0;
  if (bytes.subarray(0, 3).toString('latin1') === 'ID3') {
    const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
    offset = 10 + size;
  }
  const BITRATES = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
  let frames = 0;
  while (offset + 4 <= bytes.length) {
    const [b0, b1, b2] = [bytes[offset]!, bytes[offset + 1]!, bytes[offset + 2]!];
    if (frames > 0 && bytes.subarray(offset, offset + 3).toString('latin1') === 'TAG') break; // ID3v1 trailer
    assert.equal(b0, 0xff, `frame sync at byte ${offset}`);
    assert.equal(b1 & 0xe0, 0xe0, `frame sync at byte ${offset}`);
    assert.equal((b1 >> 3) & 0x03, 0x03, 'MPEG-1');
    assert.equal((b1 >> 1) & 0x03, 0x01, 'Layer III');
    assert.equal((b2 >> 2) & 0x03, 0x00, '44.1 kHz');
    const bitrate = BITRATES[b2 >> 4];
    assert.ok(bitrate, `a valid bitrate index at byte ${offset}`);
    offset += Math.floor((144 * bitrate * 1000) / 44_100) + ((b2 >> 1) & 0x01);
    frames++;
  }
  assert.ok(frames > 0, 'at least one MP3 frame');
  return frames;
}
