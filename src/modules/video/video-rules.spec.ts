import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreateVideoTaskDto } from './dto/create-video-task.dto.js';
import { isMediaUri } from './dto/create-video-task.dto.js';
import { resolveVideoRequest } from './video-rules.js';
import { StaticPriceCatalogue } from '../billing/price-catalogue.js';
import { billableSeconds } from './video-task.runner.js';

const V11 = 'vendor-omni-1.1-flash-preview' as const;
const dto = (d: Partial<CreateVideoTaskDto>): CreateVideoTaskDto => ({ model: V11, prompt: 'p', ...d }) as CreateVideoTaskDto;

describe('video creation rules', () => {
  it('infers the mode from the assets; a source video alone is video_modify', () => {
    assert.equal(resolveVideoRequest(dto({})).mode, 'text_to_video');
    assert.equal(resolveVideoRequest(dto({ assets: { firstFrameImage: 'https://a/b.png' } })).mode, 'image_first_frame');
    assert.equal(resolveVideoRequest(dto({ assets: { firstFrameImage: 'https://a/b.png', lastFrameImage: 'https://a/c.png' } })).mode, 'image_first_last_frame');
    assert.equal(resolveVideoRequest(dto({ assets: { referenceVideos: ['https://a/b.mp4'] } })).mode, 'multimodal_reference');
    assert.equal(resolveVideoRequest(dto({ assets: { sourceVideo: 'https://a/b.mp4' } })).mode, 'video_modify');
    assert.equal(resolveVideoRequest(dto({ mode: 'video_extend', assets: { sourceVideo: 'https://a/b.mp4' } })).mode, 'video_extend');
  });

  it('fills in the defaults', () => {
    assert.deepEqual(resolveVideoRequest(dto({})).controls, { duration: 5, resolution: '720p', ratio: '16:9', generateAudio: true, outputCount: 1 });
  });

  it('refuses http:// unless allowed', () => {
    assert.throws(() => resolveVideoRequest(dto({ assets: { sourceVideo: 'http://a/b.mp4' } })), /assets.sourceVideo/);
    assert.equal(resolveVideoRequest(dto({ assets: { sourceVideo: 'http://a/b.mp4' } }), { allowHttp: true }).mode, 'video_modify');
  });

  it('accepts https and gs:// URIs only', () => {
    for (const ok of ['https://x.example/a.png?sig=1', 'gs://bucket-1/dir/a.mp4']) assert.equal(isMediaUri(ok), true, ok);
    for (const bad of ['gs://bucket', 'data:image/png;base64,AA', 'asset://x', '/tmp/x', 'https://user:pw@x/a', 'ftp://x/a', 7]) {
      assert.equal(isMediaUri(bad), false, String(bad));
    }
  });

  it('bills measured seconds to the tenth, capped at the longest output', () => {
    const longest = new StaticPriceCatalogue().videoMaxOutputSeconds(V11);
    assert.equal(billableSeconds(3.022, longest), 3);
    assert.equal(billableSeconds(7.96, longest), 8);
    assert.equal(billableSeconds(10.4, longest), 10);
  });
});
