import { Injectable } from '@nestjs/common';
import { DEFAULT_PAGE_LIMIT, decodeCursor, isIdOf, microsToUsd, type Page, toPage } from '../../../libs/common/index.js';
import { AUDIO_MODEL_IDS, AUDIO_OUTPUT_FORMATS } from '../../../libs/providers/index.js';
import { PriceCatalogue } from '../billing/index.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { AUDIO_MAX_DIALOGUE_ENTRIES, AUDIO_MAX_DIALOGUE_VOICES, AUDIO_MAX_TEXT_CHARACTERS } from './audio.constants.js';
import { audioTaskNotFound } from './audio-errors.js';
import { MODEL_MODES } from './audio-rules.js';
import { AudioTaskPresenter } from './audio-task.presenter.js';
import { AudioTaskRepository } from './audio-task.repository.js';
import type { AudioModelListDto, AudioTaskResponseDto } from './audio-task.resource.js';
import type { ListAudioGenerationsQueryDto } from './dto/create-audio-generation.dto.js';

/** Reading audio tasks (owner only, fresh links on every read) and the model list. */
@Injectable()
export class AudioTaskService {
  constructor(
    private readonly tasks: AudioTaskRepository,
    private readonly presenter: AudioTaskPresenter,
    private readonly prices: PriceCatalogue,
  ) {}

  async get(key: AuthenticatedKey, id: string): Promise<AudioTaskResponseDto> {
    // Not an audio id, missing, or another key's: the same 404 (spec › Authentication 2).
    const task = isIdOf('audio', id) ? await this.tasks.findOwned(key.id, id) : null;
    if (!task) throw audioTaskNotFound();
    return this.presenter.toResource(task);
  }

  async list(key: AuthenticatedKey, query: ListAudioGenerationsQueryDto): Promise<Page<AudioTaskResponseDto>> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.tasks.listOwned(key.id, { limit, after: decodeCursor(query.after), status: query.status });
    const page = toPage(rows, limit, (row) => row);
    return { ...page, items: await Promise.all(page.items.map((row) => this.presenter.toResource(row))) };
  }

  /** Every model with its modes, limits and the caller's final prices (from the price catalogue). */
  models(key: AuthenticatedKey): AudioModelListDto {
    const context = { workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment };
    return {
      models: AUDIO_MODEL_IDS.map((id) => {
        const modes = [...MODEL_MODES[id]];
        const dialogue = modes.includes('text_to_dialogue');
        return {
          id,
          modes,
          outputFormats: [...AUDIO_OUTPUT_FORMATS],
          limits: {
            maxTextCharacters: AUDIO_MAX_TEXT_CHARACTERS,
            ...(dialogue ? { maxDialogueEntries: AUDIO_MAX_DIALOGUE_ENTRIES, maxDialogueVoices: AUDIO_MAX_DIALOGUE_VOICES } : {}),
          },
          pricing: {
            perCharacterUsd: microsToUsd(this.prices.speechCost(context, id, 1)),
            per1000CharactersUsd: microsToUsd(this.prices.speechCost(context, id, 1000)),
          },
        };
      }),
    };
  }
}
