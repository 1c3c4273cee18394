import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GeminiPart, GeminiRequest } from '../../../../libs/providers/index.js';
import { estimateInputTokens, INPUT_WINDOW_TOKENS } from './hold-estimate.js';

function box(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** An MP4 as far as its duration goes: ftyp, then moov/mvhd (version 0) saying `seconds`. */
function mp4Of(seconds: number): string {
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(1000, 12);
  mvhd.writeUInt32BE(seconds * 1000, 16);
  return Buffer.concat([box('ftyp', Buffer.from('isom\0\0\x02\0isomavc1', 'latin1')), box('mdat', Buffer.alloc(4096)), box('moov', box('mvhd', mvhd))]).toString('base64');
}

const request = (...parts: GeminiPart[]): GeminiRequest => ({ contents: [{ role: 'user', parts }] });
/** What one part adds to a request, less the token of its place in the list of parts. */
const partTokens = (part: GeminiPart): number => estimateInputTokens(request(part)) - estimateInputTokens(request()) - 1;

describe('hold estimate: never below what the upstream can bill', () => {
  it('counts text as UTF-8 bytes, so scripts a tokenizer splits finely are covered', () => {
    // 1,000 CJK characters: up to three byte-fallback tokens each.
    assert.ok(partTokens({ text: '漢'.repeat(1000) }) >= 3000);
    assert.ok(partTokens({ text: '🙂'.repeat(1000) }) >= 4000);
    assert.ok(partTokens({ text: 'a'.repeat(3000) }) >= 3000);
  });

  it('counts the keys of a tool schema, not only its string values', () => {
    const properties: Record<string, { type: string }> = {};
    for (let i = 0; i < 900; i++) properties[`p${String(i).padStart(99, '0')}`] = { type: 'string' };
    const tokens = estimateInputTokens({ ...request({ text: 'x' }), tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'object', properties } }] }] });
    assert.ok(tokens >= 900 * 100, `${tokens}`);
  });

  it('counts a video by its duration at its fps: 300 tokens a frame and 32 a second of sound', () => {
    // 16 s at 24 fps is 384 frames, 99,072 tokens at Gemini's 258 a frame (what a hold of 1,120 missed).
    const at24 = partTokens({ inlineData: { mimeType: 'video/mp4', data: mp4Of(16) }, videoMetadata: { fps: 24 } });
    assert.equal(at24, (16 * 24 + 1) * 300 + 16 * 32);
    assert.ok(at24 > 16 * 24 * 280 + 16 * 32);
    const atDefault = partTokens({ inlineData: { mimeType: 'video/mp4', data: mp4Of(16) } });
    assert.equal(atDefault, 17 * 300 + 16 * 32);
  });

  it('takes the whole input window for media it cannot measure: a video that is not MP4, a PDF, an unknown type, a link', () => {
    const webm = Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]).toString('base64');
    for (const part of [
      { inlineData: { mimeType: 'video/webm', data: webm } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'application/octet-stream', data: 'AAAA' } },
      { fileData: { fileUri: 'https://cdn.example.com/clip.mp4', mimeType: 'video/mp4' } },
    ] satisfies GeminiPart[]) {
      assert.equal(estimateInputTokens(request(part)), INPUT_WINDOW_TOKENS, JSON.stringify(part).slice(0, 80));
    }
  });

  it('holds a request at most at the input window, however many parts could not be measured (the upstream refuses a longer prompt)', () => {
    const pdf = { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } };
    assert.equal(estimateInputTokens(request(pdf, pdf, pdf, pdf, { text: 'compare them' })), INPUT_WINDOW_TOKENS);
    assert.equal(estimateInputTokens(request({ text: 'x'.repeat(2_000_000) })), INPUT_WINDOW_TOKENS);
  });

  it('counts audio as the seconds its bytes hold at 6 kbps, text files by their bytes, images at 1,120 or a token per 64 bytes', () => {
    const mp3 = Buffer.alloc(75_000).toString('base64'); // 100 s at 6 kbps; 4.7 s at 128 kbps
    assert.equal(partTokens({ inlineData: { mimeType: 'audio/mpeg', data: mp3 } }), 100 * 32);
    assert.equal(partTokens({ inlineData: { mimeType: 'text/csv', data: Buffer.from('a,b\n1,2\n').toString('base64') } }), 8);
    assert.equal(partTokens({ inlineData: { mimeType: 'image/png', data: Buffer.alloc(1000).toString('base64') } }), 1120);
    assert.equal(partTokens({ inlineData: { mimeType: 'image/png', data: Buffer.alloc(640_000).toString('base64') } }), 10_000);
  });
});
