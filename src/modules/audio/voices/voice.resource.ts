import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AUDIO_MODEL_IDS, type AudioModelId, type VoiceInfo } from '../../../../libs/providers/index.js';

/** spec › Voice, plus `gender`, `age` and `category` from the catalogue. */
export class VoiceResponseDto {
  @ApiProperty({ description: 'Official voice id', example: '21m00Tcm4TlvDq8ikWAM' })
  id!: string;
  @ApiProperty()
  name!: string;
  @ApiProperty({ enum: ['available', 'private', 'removed'] })
  status!: VoiceInfo['status'];
  @ApiProperty({ enum: AUDIO_MODEL_IDS, isArray: true })
  models!: AudioModelId[];
  @ApiPropertyOptional({ format: 'uri', description: 'A playable MP3 sample; no Bearer needed, no charge. Sandbox samples are signed links valid up to one hour' })
  previewUrl?: string;
  @ApiProperty({ description: 'Empty when the catalogue has none' })
  description!: string;
  @ApiProperty({ description: 'Two-letter language code; empty when the catalogue has none' })
  language!: string;
  @ApiProperty({ description: 'Empty when the catalogue has none' })
  accent!: string;
  @ApiPropertyOptional({ enum: ['female', 'male', 'neutral'] })
  gender?: VoiceInfo['gender'];
  @ApiPropertyOptional({ enum: ['young', 'middle_aged', 'old'] })
  age?: VoiceInfo['age'];
  @ApiProperty({ enum: ['premade', 'library'] })
  category!: VoiceInfo['category'];
}

export class VoiceLibraryPageDto {
  @ApiProperty({ type: [VoiceResponseDto], maxItems: 30 })
  voices!: VoiceResponseDto[];
  @ApiProperty({ description: 'Zero-based' })
  page!: number;
  @ApiProperty()
  hasMore!: boolean;
  @ApiProperty({ description: 'Usable voices matching the filters, over every page' })
  totalCount!: number;
}

export class SavedVoiceResponseDto extends VoiceResponseDto {
  @ApiProperty({ type: String, nullable: true, description: '1–64 of a-z 0-9 _ -, unique per API key' })
  alias!: string | null;
  @ApiProperty({ format: 'date-time', description: 'When this key first saved the voice' })
  savedAt!: string;
}

export class SavedVoiceListDto {
  @ApiProperty({ type: [SavedVoiceResponseDto], description: 'Newest first' })
  voices!: SavedVoiceResponseDto[];
}

/** The wire shape of a catalogue voice; the preview link is minted by the caller. */
export function toVoiceResource(voice: VoiceInfo, previewUrl: string | undefined): VoiceResponseDto {
  return {
    id: voice.id,
    name: voice.name,
    status: voice.status,
    models: [...voice.models],
    ...(previewUrl ? { previewUrl } : {}),
    description: voice.description ?? '',
    language: voice.language ?? '',
    accent: voice.accent ?? '',
    ...(voice.gender ? { gender: voice.gender } : {}),
    ...(voice.age ? { age: voice.age } : {}),
    category: voice.category,
  };
}
