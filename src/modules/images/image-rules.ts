import {
  IMAGE_MODEL_ASPECT_RATIOS,
  IMAGE_MODEL_IDS,
  IMAGE_MODEL_SIZES,
  type ImageAspectRatio,
  type ImageModelId,
  type ImageSizeName,
} from '../../../libs/providers/index.js';
import { isStorableText } from '../../../libs/common/index.js';
import type { CreateImageGenerationDto } from './dto/create-image-generation.dto.js';
import { ImageErrorCode, imageInvalid } from './image-errors.js';
import { IMAGE_MAX_PROMPT_CHARACTERS } from './images.constants.js';

export const IMAGE_DEFAULT_SIZE: ImageSizeName = '1K';
export const IMAGE_DEFAULT_ASPECT_RATIO: ImageAspectRatio = '1:1';

/** A request that passed every rule: what the references loader and the generation need. */
export interface ImageRules {
  model: ImageModelId;
  prompt?: string;
  /** As the client wrote them; loaded (fetched, decoded, sniffed) by ImageReferenceLoader. */
  referenceSources: string[];
  size: ImageSizeName;
  /** Absent for an edit (references given) that names no ratio: the picture follows the references. */
  aspectRatio?: ImageAspectRatio;
  generationConfig?: Record<string, number>;
  safetySettings?: Array<Record<string, string>>;
}

const isModel = (value: string): value is ImageModelId => (IMAGE_MODEL_IDS as readonly string[]).includes(value);

/** The cross-field rules the DTO cannot express (per-model sizes and ratios: image-models.ts, shared with the adapters); every refusal is a 400 with an `image.` code. */
export function applyImageRules(dto: CreateImageGenerationDto): ImageRules {
  if (!isModel(dto.model)) {
    throw imageInvalid(ImageErrorCode.UnknownModel, `model: must be one of ${IMAGE_MODEL_IDS.join(', ')}`);
  }
  const model = dto.model;
  const referenceSources = dto.assets?.referenceImages ?? [];
  const prompt = dto.prompt;
  if ((prompt === undefined || prompt.trim() === '') && referenceSources.length === 0) {
    throw imageInvalid(ImageErrorCode.PromptRequired, 'prompt: required unless at least one reference image is given');
  }
  if (prompt !== undefined) {
    // Stored in the row's jsonb snapshot, which takes neither NUL nor half a surrogate pair (and no upstream wants them).
    if (!isStorableText(prompt)) {
      throw imageInvalid(ImageErrorCode.InvalidField, 'prompt: must not contain NUL characters or unpaired UTF-16 surrogates');
    }
    // Characters are code points (an emoji is one), not UTF-16 units.
    if (characterCount(prompt) > IMAGE_MAX_PROMPT_CHARACTERS) {
      throw imageInvalid(ImageErrorCode.PromptTooLong, `prompt: at most ${IMAGE_MAX_PROMPT_CHARACTERS} characters`);
    }
  }

  const size = dto.controls?.size ?? IMAGE_DEFAULT_SIZE;
  const sizes = IMAGE_MODEL_SIZES[model];
  if (!(sizes as readonly string[]).includes(size)) {
    throw imageInvalid(ImageErrorCode.UnsupportedSize, `controls.size: ${model} offers ${sizes.join(', ')}`);
  }
  // Unnamed, a new picture is square and an edit follows its references (the upstream's own defaults).
  const aspectRatio = dto.controls?.aspectRatio ?? (referenceSources.length > 0 ? undefined : IMAGE_DEFAULT_ASPECT_RATIO);
  const ratios = IMAGE_MODEL_ASPECT_RATIOS[model];
  if (aspectRatio !== undefined && !(ratios as readonly string[]).includes(aspectRatio)) {
    throw imageInvalid(ImageErrorCode.UnsupportedAspectRatio, `controls.aspectRatio: ${model} offers ${ratios.join(', ')}`);
  }

  const vendor = dto.providerOptions?.vendor;
  const candidateCount = vendor?.generationConfig?.candidateCount;
  if (candidateCount !== undefined && candidateCount !== 1) {
    throw imageInvalid(ImageErrorCode.UnsupportedCandidateCount, 'providerOptions.vendor.generationConfig.candidateCount: fixed at 1; make separate calls for alternatives');
  }

  return {
    model,
    prompt: prompt === undefined || prompt.trim() === '' ? undefined : prompt,
    referenceSources,
    size: size as ImageSizeName,
    aspectRatio: aspectRatio as ImageAspectRatio | undefined,
    generationConfig: vendor?.generationConfig ? definedOnly(vendor.generationConfig) : undefined,
    safetySettings: vendor?.safetySettings?.map((setting) => definedOnly(setting)),
  };
}


/** Code points, not UTF-16 units. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The fields the client set (class-transformer gives absent DTO fields as `undefined` keys): what is forwarded and stored. */
function definedOnly<T extends object>(value: T): Record<string, T[keyof T] & {}> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Record<string, T[keyof T] & {}>;
}
