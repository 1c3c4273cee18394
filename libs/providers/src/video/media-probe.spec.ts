import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { looksLikeMp4, mp4DurationSeconds, sniffImage } from './media-probe.js';

function box(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

function mvhd(version: 0 | 1, timescale: number, duration: number): Buffer {
  if (version === 0) {
    const body = Buffer.alloc(100);
    body.writeUInt32BE(timescale, 12);
    body.writeUInt32BE(duration, 16);
    return box('mvhd', body);
  }
  const body = Buffer.alloc(112);
  body.writeUInt8(1, 0);
  body.writeUInt32BE(timescale, 20);
  body.writeBigUInt64BE(BigInt(duration), 24);
  return box('mvhd', body);
}

const ftyp = box('ftyp', Buffer.from('isom\0\0\x02\0isomavc1', 'latin1'));

describe('media probe', () => {
  it('reads mvhd durations, version 0 and 1, with moov before or after mdat', () => {
    assert.equal(mp4DurationSeconds(Buffer.concat([ftyp, box('moov', mvhd(0, 1000, 3022))])), 3.022);
    assert.equal(mp4DurationSeconds(Buffer.concat([ftyp, box('mdat', Buffer.alloc(64)), box('moov', mvhd(1, 90000, 900000))])), 10);
  });

  it('answers null for non-MP4s, a missing movie header or a zero timescale', () => {
    assert.equal(mp4DurationSeconds(Buffer.from('hello world, not a video')), null);
    assert.equal(mp4DurationSeconds(Buffer.concat([ftyp, box('mdat', Buffer.alloc(8))])), null);
    assert.equal(mp4DurationSeconds(Buffer.concat([ftyp, box('moov', mvhd(0, 0, 10))])), null);
    assert.equal(mp4DurationSeconds(Buffer.concat([ftyp, box('moov', box('mvhd', Buffer.alloc(4)))])), null);
    assert.equal(looksLikeMp4(ftyp), true);
    assert.equal(looksLikeMp4(box('ftyp', Buffer.concat([Buffer.from('qt  '), Buffer.alloc(4)]))), false, 'QuickTime .mov is not MP4');
  });

  it('tells JPEG, PNG and WebP by their magic bytes and nothing else', () => {
    assert.equal(sniffImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0])), 'image/jpeg');
    assert.equal(sniffImage(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])), 'image/png');
    assert.equal(sniffImage(Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')])), 'image/webp');
    assert.equal(sniffImage(Buffer.from('GIF89a......')), null);
    assert.equal(sniffImage(Buffer.alloc(0)), null);
  });
});
