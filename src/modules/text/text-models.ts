import { DomainError } from '../../../libs/common/index.js';
import { TEXT_MODEL_IDS } from '../../../libs/providers/index.js';
import { TextErrorCode } from './text-errors.js';

/** 2026-01-01T00:00:00Z: a fixed `created` so the list is stable. */
const CREATED = 1_767_225_600;

const toModel = (id: string) => ({ id, object: 'model', created: CREATED, owned_by: 'vendor' });

export function listTextModels(): Record<string, unknown> {
  return { object: 'list', data: TEXT_MODEL_IDS.map(toModel) };
}

export function findTextModel(id: string): Record<string, unknown> {
  if (!(TEXT_MODEL_IDS as readonly string[]).includes(id)) throw new DomainError(404, TextErrorCode.ModelNotFound, `model ${JSON.stringify(id)} not found`);
  return toModel(id);
}
