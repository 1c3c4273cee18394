import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../../libs/common/index.js';
import { StrictValidationPipe } from '../../app/validation.pipe.js';
import { CreateImageGenerationDto } from './dto/create-image-generation.dto.js';
import { applyImageRules, type ImageRules } from './image-rules.js';

const pipe = new StrictValidationPipe();

/** The DTO (as the global pipe runs it), then the cross-field rules: what the controller does. */
async function validate(body: unknown): Promise<ImageRules> {
  const dto = (await pipe.transform(body, { type: 'body', metatype: CreateImageGenerationDto })) as CreateImageGenerationDto;
  return applyImageRules(dto);
}

/** The relative or `image.` code of the refusal (the filter adds the prefix to relative ones). */
async function refusal(body: unknown): Promise<string> {
  try {
    await validate(body);
  } catch (error) {
    assert.ok(error instanceof DomainError);
    assert.equal(error.status, 400);
    return error.code;
  }
  return 'accepted';
}

const PNG_DATA = 'data:image/png;base64,iVBORw0KGgo=';

describe('image request rules', () => {
  it('fills the defaults: 1K at 1:1', async () => {
    const rules = await validate({ model: 'vendor-3.1-flash-image', prompt: 'a red kite' });
    assert.equal(rules.size, '1K');
    assert.equal(rules.aspectRatio, '1:1');
    assert.deepEqual(rules.referenceSources, []);
  });

  const cases: Array<[string, unknown, string]> = [
    ['lite at 2K', { model: 'vendor-3.1-flash-lite-image', prompt: 'x', controls: { size: '2K' } }, 'image.unsupported_size'],
    ['lite at 9:21', { model: 'vendor-3.1-flash-lite-image', prompt: 'x', controls: { aspectRatio: '9:21' } }, 'image.unsupported_aspect_ratio'],
    ['pro at 512', { model: 'vendor-3-pro-image', prompt: 'x', controls: { size: '512' } }, 'image.unsupported_size'],
    ['an unknown size', { model: 'vendor-3-pro-image', prompt: 'x', controls: { size: '8K' } }, 'image.unsupported_size'],
    ['an unknown ratio', { model: 'vendor-3-pro-image', prompt: 'x', controls: { aspectRatio: '7:5' } }, 'image.unsupported_aspect_ratio'],
    ['an unknown model', { model: 'vendor-9-image', prompt: 'x' }, 'image.unknown_model'],
    ['no prompt and no reference', { model: 'vendor-3-pro-image' }, 'image.prompt_required'],
    ['a blank prompt and no reference', { model: 'vendor-3-pro-image', prompt: '   ' }, 'image.prompt_required'],
    ['a prompt over 10,000 characters', { model: 'vendor-3-pro-image', prompt: 'x'.repeat(10_001) }, 'image.prompt_too_long'],
    ['15 references', { model: 'vendor-3-pro-image', prompt: 'x', assets: { referenceImages: Array(15).fill(PNG_DATA) } }, 'invalid_field'],
    ['a candidateCount of 2', { model: 'vendor-3-pro-image', prompt: 'x', providerOptions: { vendor: { generationConfig: { candidateCount: 2 } } } }, 'image.unsupported_candidate_count'],
    ['a non-sampling generationConfig field', { model: 'vendor-3-pro-image', prompt: 'x', providerOptions: { vendor: { generationConfig: { responseModalities: ['TEXT'] } } } }, 'unknown_field'],
    ['an unknown field at depth', { model: 'vendor-3-pro-image', prompt: 'x', controls: { size: '1K', quality: 'hd' } }, 'unknown_field'],
    ['an unknown top-level field', { model: 'vendor-3-pro-image', prompt: 'x', n: 2 }, 'unknown_field'],
    ['a malformed safety setting', { model: 'vendor-3-pro-image', prompt: 'x', providerOptions: { vendor: { safetySettings: [{ category: 'violence', threshold: 'BLOCK_NONE' }] } } }, 'invalid_field'],
    ['a prompt with a NUL character', { model: 'vendor-3-pro-image', prompt: 'a\u0000b' }, 'image.invalid_field'],
    ['a prompt with an unpaired low surrogate', { model: 'vendor-3-pro-image', prompt: '\uDC00 a kite' }, 'image.invalid_field'],
    ['a safety threshold the upstream does not know', { model: 'vendor-3-pro-image', prompt: 'x', providerOptions: { vendor: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_SOME' }] } } }, 'invalid_field'],
    ['a Vertex-only safety method', { model: 'vendor-3-pro-image', prompt: 'x', providerOptions: { vendor: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'OFF', method: 'SEVERITY' }] } } }, 'unknown_field'],
    ['a temperature above 2', { model: 'vendor-3-pro-image', prompt: 'x', providerOptions: { vendor: { generationConfig: { temperature: 3 } } } }, 'invalid_field'],
  ];
  for (const [name, body, code] of cases) {
    it(`refuses ${name} (${code})`, async () => {
      assert.equal(await refusal(body), code);
    });
  }

  it('accepts a prompt of 10,000 code points, and paired surrogates (an emoji is one character)', async () => {
    assert.equal((await validate({ model: 'vendor-3-pro-image', prompt: '\u{1F3A8}'.repeat(10_000) })).prompt!.length, 20_000);
  });

  it('leaves the ratio unnamed for an edit that names none (the picture follows the references), 1:1 for a new picture', async () => {
    assert.equal((await validate({ model: 'vendor-3.1-flash-image', assets: { referenceImages: [PNG_DATA] } })).aspectRatio, undefined);
    assert.equal((await validate({ model: 'vendor-3.1-flash-image', prompt: 'x', assets: { referenceImages: [PNG_DATA] }, controls: { aspectRatio: '4:5' } })).aspectRatio, '4:5');
    assert.equal((await validate({ model: 'vendor-3.1-flash-image', prompt: 'x', assets: { referenceImages: [] } })).aspectRatio, '1:1');
  });

  it('accepts every size each model offers and 9:21 on pro and flash', async () => {
    for (const size of ['1K', '2K', '4K']) assert.equal((await validate({ model: 'vendor-3-pro-image', prompt: 'x', controls: { size } })).size, size);
    for (const size of ['512', '1K', '2K', '4K']) assert.equal((await validate({ model: 'vendor-3.1-flash-image', prompt: 'x', controls: { size } })).size, size);
    assert.equal((await validate({ model: 'vendor-3-pro-image', prompt: 'x', controls: { aspectRatio: '9:21' } })).aspectRatio, '9:21');
    assert.equal((await validate({ model: 'vendor-3.1-flash-image', prompt: 'x', controls: { aspectRatio: '9:21' } })).aspectRatio, '9:21');
  });

  it('accepts a reference without a prompt, 14 references, candidateCount 1, and forwards sampling and safety settings', async () => {
    const rules = await validate({
      model: 'vendor-3.1-flash-image',
      assets: { referenceImages: Array(14).fill(PNG_DATA) },
      providerOptions: { vendor: { generationConfig: { temperature: 0.4, topP: 0.9, candidateCount: 1 }, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] } },
    });
    assert.equal(rules.prompt, undefined);
    assert.equal(rules.referenceSources.length, 14);
    assert.deepEqual(rules.generationConfig, { temperature: 0.4, topP: 0.9, candidateCount: 1 });
    assert.deepEqual(rules.safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }]);
  });
});
