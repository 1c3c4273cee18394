import { DomainError } from '../../../libs/common/index.js';

/** Every error code of the omni video routes (the spec's dotted strings). */
export enum VideoErrorCode {
  InvalidField = 'video.invalid_field',
  UnknownField = 'video.unknown_field',
  /** The mode is not supported by the model (mode and model table). */
  UnsupportedMode = 'video.unsupported_mode',
  /** Rule 1: the base model supports 720p only. */
  UnsupportedResolution = 'video.unsupported_resolution',
  /** Rule 2: frames, reference media and source video in one request. */
  ConflictingAssets = 'video.conflicting_assets',
  /** An explicit mode whose assets do not match it. */
  ModeAssetsMismatch = 'video.mode_assets_mismatch',
  InsufficientBalance = 'video.insufficient_balance',
  Unavailable = 'video.unavailable',
  NotFound = 'video.not_found',
  OperationNotSupported = 'video.operation_not_supported',
}

export const videoInvalid = (field: string, why: string, code: VideoErrorCode = VideoErrorCode.InvalidField): DomainError =>
  new DomainError(400, code, `${field}: ${why}`);

export const videoTaskNotFound = (): DomainError => new DomainError(404, VideoErrorCode.NotFound, 'video task not found');
