import { Injectable } from '@nestjs/common';
import type { CursorPosition } from '../../../libs/common/index.js';
import type { AuthenticatedKey } from '../identity/index.js';

/** The list filter of the shared task endpoint, as every reader receives it. */
export interface SharedTaskListFilter {
  limit: number;
  after?: CursorPosition;
  status?: 'queued' | 'running' | 'succeeded' | 'failed';
  model?: string;
}

/** One listed task: its cursor position and how to render it (links are minted only for the page kept). */
export interface SharedTaskListEntry {
  id: string;
  createdAt: Date;
  render(): Promise<object>;
}

/**
 * Another domain's tasks served by the shared `/v1/contents/generations/tasks` endpoint (the
 * alternate provider's `alt:` tasks): GET, DELETE and the list ask the reader registered for the
 * id's prefix, so video never reads another module's tables.
 */
export interface SharedTaskReader {
  /** The id prefix it owns, without the colon (`alt`). */
  readonly idPrefix: string;
  /** The caller's task, or null when missing or another key's (the endpoint answers 404). */
  get(key: AuthenticatedKey, id: string): Promise<object | null>;
  /** Throws the domain's refusal for an owned task; resolves false when missing or another key's. */
  delete(key: AuthenticatedKey, id: string): Promise<false>;
  /** Up to `limit + 1` of the caller's tasks, newest first, after the cursor. */
  list(key: AuthenticatedKey, filter: SharedTaskListFilter): Promise<SharedTaskListEntry[]>;
}

/** The registry of shared-endpoint readers (video's extension point; a domain registers in `onModuleInit`). */
@Injectable()
export class GenerationTaskReaders {
  private readonly readers = new Map<string, SharedTaskReader>();

  register(reader: SharedTaskReader): void {
    if (reader.idPrefix === 'omni' || this.readers.has(reader.idPrefix)) throw new Error(`a task reader for ${reader.idPrefix}: is already registered`);
    this.readers.set(reader.idPrefix, reader);
  }

  readerFor(id: string): SharedTaskReader | undefined {
    const colon = id.indexOf(':');
    return colon > 0 ? this.readers.get(id.slice(0, colon)) : undefined;
  }

  all(): SharedTaskReader[] {
    return [...this.readers.values()];
  }
}
