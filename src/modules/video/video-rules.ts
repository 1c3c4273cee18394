import type { AssetRole, VideoMode } from '../../../libs/providers/index.js';
import type { VideoModel } from '../billing/index.js';
import type { CreateVideoTaskDto } from './dto/create-video-task.dto.js';
import { VideoErrorCode, videoInvalid } from './video-errors.js';
import type { VideoRequestSnapshot } from './video-task.entity.js';

/** The mode and model table of the spec. */
export const MODE_SUPPORT: Record<VideoMode, readonly VideoModel[]> = {
  text_to_video: ['vendor-omni-flash-preview', 'vendor-omni-1.1-flash-preview'],
  video_modify: ['vendor-omni-flash-preview', 'vendor-omni-1.1-flash-preview'],
  image_first_frame: ['vendor-omni-1.1-flash-preview'],
  image_first_last_frame: ['vendor-omni-1.1-flash-preview'],
  multimodal_reference: ['vendor-omni-1.1-flash-preview'],
  video_extend: ['vendor-omni-1.1-flash-preview'],
};

/** Rule 1: resolutions per model. */
export const MODEL_RESOLUTIONS: Record<VideoModel, readonly string[]> = {
  'vendor-omni-flash-preview': ['720p'],
  'vendor-omni-1.1-flash-preview': ['360p', '720p', '1080p', '4k'],
};

type AssetForm = 'frames' | 'references' | 'source';

/**
 * The cross-field rules of a creation request, after the DTO's field rules passed: asset forms
 * not combined (rule 2), mode inferred or checked against the assets, the model supports the
 * mode and the resolution (rule 1). Returns the snapshot the task keeps, with defaults filled in.
 * Every refusal names its field; it runs before any hold.
 */
export function resolveVideoRequest(dto: CreateVideoTaskDto, options: { allowHttp?: boolean } = {}): VideoRequestSnapshot {
  const assets = dto.assets ?? {};
  if (!options.allowHttp) {
    for (const field of ['firstFrameImage', 'lastFrameImage', 'sourceVideo', 'referenceImages', 'referenceVideos'] as const) {
      const value = assets[field];
      const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
      list.forEach((uri, i) => {
        if (uri.startsWith('http://')) {
          throw videoInvalid(Array.isArray(value) ? `assets.${field}.${i}` : `assets.${field}`, 'must be an https:// URL or a gs://bucket/object URI');
        }
      });
    }
  }
  const forms = new Set<AssetForm>();
  if (assets.firstFrameImage !== undefined || assets.lastFrameImage !== undefined) forms.add('frames');
  if (assets.referenceImages !== undefined || assets.referenceVideos !== undefined) forms.add('references');
  if (assets.sourceVideo !== undefined) forms.add('source');
  if (forms.size > 1) {
    throw videoInvalid(
      'assets',
      'frame images, reference media and a source video cannot be combined in one request',
      VideoErrorCode.ConflictingAssets,
    );
  }
  if (assets.lastFrameImage !== undefined && assets.firstFrameImage === undefined) {
    throw videoInvalid('assets.firstFrameImage', 'is required when assets.lastFrameImage is given', VideoErrorCode.ModeAssetsMismatch);
  }

  const inferred: VideoMode =
    assets.sourceVideo !== undefined ? 'video_modify'
    : forms.has('references') ? 'multimodal_reference'
    : assets.lastFrameImage !== undefined ? 'image_first_last_frame'
    : assets.firstFrameImage !== undefined ? 'image_first_frame'
    : 'text_to_video';
  const mode = dto.mode ?? inferred;
  if (dto.mode !== undefined && !modeMatchesAssets(dto.mode, inferred)) {
    throw videoInvalid('mode', `${dto.mode} needs ${MODE_ASSETS[dto.mode]}; the request's assets fit ${inferred}`, VideoErrorCode.ModeAssetsMismatch);
  }
  if (!MODE_SUPPORT[mode].includes(dto.model)) {
    throw videoInvalid('mode', `${mode} is not supported by ${dto.model}`, VideoErrorCode.UnsupportedMode);
  }
  const resolution = dto.controls?.resolution ?? '720p';
  if (!MODEL_RESOLUTIONS[dto.model].includes(resolution)) {
    throw videoInvalid(
      'controls.resolution',
      `${dto.model} supports ${MODEL_RESOLUTIONS[dto.model].join(', ')} only`,
      VideoErrorCode.UnsupportedResolution,
    );
  }
  const snapshotAssets: VideoRequestSnapshot['assets'] = {};
  for (const field of ['firstFrameImage', 'lastFrameImage', 'sourceVideo'] as const) {
    if (assets[field] !== undefined) snapshotAssets[field] = assets[field];
  }
  if (assets.referenceImages !== undefined) snapshotAssets.referenceImages = [...assets.referenceImages];
  if (assets.referenceVideos !== undefined) snapshotAssets.referenceVideos = [...assets.referenceVideos];
  return {
    prompt: dto.prompt,
    mode,
    assets: snapshotAssets,
    controls: {
      duration: dto.controls?.duration ?? 5,
      resolution,
      ratio: dto.controls?.ratio ?? '16:9',
      generateAudio: true,
      outputCount: 1,
    },
  };
}

const MODE_ASSETS: Record<VideoMode, string> = {
  text_to_video: 'no assets',
  image_first_frame: 'assets.firstFrameImage only',
  image_first_last_frame: 'assets.firstFrameImage and assets.lastFrameImage',
  multimodal_reference: 'assets.referenceImages and/or assets.referenceVideos',
  video_extend: 'assets.sourceVideo',
  video_modify: 'assets.sourceVideo',
};

function modeMatchesAssets(mode: VideoMode, inferred: VideoMode): boolean {
  if (mode === 'video_extend') return inferred === 'video_modify';
  return mode === inferred;
}

/** Every asset URI of a snapshot with its role and field path (for validation messages). */
export function assetList(snapshot: VideoRequestSnapshot): Array<{ role: AssetRole; field: string; uri: string }> {
  const list: Array<{ role: AssetRole; field: string; uri: string }> = [];
  const a = snapshot.assets;
  if (a.firstFrameImage) list.push({ role: 'firstFrameImage', field: 'assets.firstFrameImage', uri: a.firstFrameImage });
  if (a.lastFrameImage) list.push({ role: 'lastFrameImage', field: 'assets.lastFrameImage', uri: a.lastFrameImage });
  a.referenceImages?.forEach((uri, i) => list.push({ role: 'referenceImage', field: `assets.referenceImages.${i}`, uri }));
  if (a.sourceVideo) list.push({ role: 'sourceVideo', field: 'assets.sourceVideo', uri: a.sourceVideo });
  a.referenceVideos?.forEach((uri, i) => list.push({ role: 'referenceVideo', field: `assets.referenceVideos.${i}`, uri }));
  return list;
}
