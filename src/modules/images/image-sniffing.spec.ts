import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { sniffImageType } from './image-sniffing.js';

/** An ISO-BMFF `ftyp` box: size, 'ftyp', major brand, minor version, compatible brands. */
function ftyp(major: string, compatible: string[]): Buffer {
  const box = Buffer.alloc(16 + 4 * compatible.length + 8);
  box.writeUInt32BE(16 + 4 * compatible.length, 0);
  box.write('ftyp', 4, 'latin1');
  box.write(major, 8, 'latin1');
  compatible.forEach((brand, i) => box.write(brand, 16 + 4 * i, 'latin1'));
  return box;
}

const pixel = () => sharp({ create: { width: 4, height: 3, channels: 3, background: '#3a7' } });

describe('sniffImageType (magic bytes, not names)', () => {
  it('recognises real PNG, JPEG and WebP files made by sharp', async () => {
    assert.equal(sniffImageType(await pixel().png().toBuffer()), 'image/png');
    assert.equal(sniffImageType(await pixel().jpeg().toBuffer()), 'image/jpeg');
    assert.equal(sniffImageType(await pixel().webp().toBuffer()), 'image/webp');
  });

  it('tells HEIC (HEVC brands) from other HEIF, by the major or a compatible brand', () => {
    assert.equal(sniffImageType(ftyp('heic', ['mif1', 'heic'])), 'image/heic');
    assert.equal(sniffImageType(ftyp('mif1', ['heic'])), 'image/heic');
    assert.equal(sniffImageType(ftyp('mif1', ['miaf'])), 'image/heif');
    assert.equal(sniffImageType(ftyp('heif', [])), 'image/heif');
  });

  it('refuses AVIF, MP4, text, GIF and truncated headers', () => {
    assert.equal(sniffImageType(ftyp('avif', ['mif1', 'miaf'])), null);
    assert.equal(sniffImageType(ftyp('isom', ['mp41'])), null);
    assert.equal(sniffImageType(Buffer.from('hello, this is a text file\n')), null);
    assert.equal(sniffImageType(Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1')), null);
    assert.equal(sniffImageType(Buffer.from([0x89, 0x50, 0x4e])), null);
    assert.equal(sniffImageType(Buffer.alloc(0)), null);
  });
});
