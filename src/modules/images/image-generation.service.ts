import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock, DomainError } from '../../../libs/common/index.js';
import { NoLiveAdapterError, ProviderRegistry, type ImageOutcome, type ImageProvider } from '../../../libs/providers/index.js';
import { type HoldInput, PriceCatalogue, type PriceContext, WalletService } from '../billing/index.js';
import { type CreationKind, holdThenRow, TaskCreations } from '../../queue/task-creations.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { MediaService } from '../media/media.service.js';
import type { CreateImageGenerationDto } from './dto/create-image-generation.dto.js';
import { ImageErrorCode } from './image-errors.js';
import { ImageGenerationEntity } from './image-generation.entity.js';
import { ImageGenerationRepository } from './image-generation.repository.js';
import { ImageMetrics } from './image-metrics.js';
import { ImageReferenceLoader } from './image-references.js';
import { sniffImageType } from './image-sniffing.js';
import { applyImageRules, type ImageRules } from './image-rules.js';
import { IMAGE_HOLD_SUBJECT, IMAGE_LINK_RETENTION_MS } from './images.constants.js';
import { newPaidTaskRow } from '../../database/paid-task-columns.js';

/** The answer (spec › Image generation): exactly these top-level fields. */
export interface ImageGenerationResponse {
  id: string;
  model: string;
  status: 'succeeded';
  outputs: { images: string[]; expiresAt: string; text?: string };
}

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/**
 * One synchronous generation (DESIGN §6): every rule and every reference checked (400, nothing
 * held) → hold the catalogue price with the row → call the upstream → store the image with a
 * 24-hour public link → settle → answer. A failure or refusal releases the hold. The client's
 * connection plays no part: a client that leaves mid-request does not cancel the call, so a
 * generated image is stored and charged exactly once, as the upstream bills it.
 */
@Injectable()
export class ImageGenerationService {
  private readonly logger = new Logger(ImageGenerationService.name);

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly references: ImageReferenceLoader,
    private readonly rows: ImageGenerationRepository,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly media: MediaService,
    private readonly metrics: ImageMetrics,
    private readonly clock: Clock,
    private readonly creations: TaskCreations,
  ) {}

  /** The hold, then the `running` row with it (no job: the request itself calls the upstream). */
  private readonly creation: CreationKind<{ hold: HoldInput; row: ImageGenerationEntity }, ImageGenerationEntity> = holdThenRow('image', {
    hold: (hold, tx) => this.wallet.hold(hold, tx),
    withHold: (row, holdId) => Object.assign(new ImageGenerationEntity(), row, { holdId }),
    insert: (tx, entity) => this.rows.insert(tx, entity),
  });

  async generate(key: AuthenticatedKey, dto: CreateImageGenerationDto): Promise<ImageGenerationResponse> {
    const rules = applyImageRules(dto);
    // Routed before any fetch: a request no upstream may serve costs no outbound call.
    const { adapter, provider } = this.providerFor(key, rules);
    const references = await this.references.load(rules.referenceSources);
    const payer: PriceContext = { workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment };
    const price = this.prices.imageCost(payer, rules.model, rules.size);
    const id = `image:${randomUUID()}`;

    const now = this.clock.now();
    const entity = newPaidTaskRow(ImageGenerationEntity, id, key, now, {
      model: rules.model,
      adapter,
      request: {
        prompt: rules.prompt,
        size: rules.size,
        aspectRatio: rules.aspectRatio,
        references: references.summaries,
        generationConfig: rules.generationConfig,
        safetySettings: rules.safetySettings,
      },
      status: 'running',
      contentType: null,
    });
    // Hold + row in one transaction, shared with the creations arriving meanwhile (TaskCreations).
    // `payer` spread last: properties after a spread are slow on Node 20 (paid-task-columns.ts).
    const row = await this.creations.create(this.creation, { hold: { amountMicros: price, subjectType: IMAGE_HOLD_SUBJECT, subjectId: id, ...payer }, row: entity });

    let outcome: ImageOutcome;
    try {
      outcome = await provider.generate({
        generationId: id,
        model: rules.model,
        prompt: rules.prompt,
        references: references.images,
        size: rules.size,
        aspectRatio: rules.aspectRatio,
        generationConfig: rules.generationConfig,
        safetySettings: rules.safetySettings,
      });
    } catch (error) {
      // An adapter is meant to return `failed`; a throw is a bug, but the client's money comes back all the same.
      this.logger.error({ msg: 'image adapter threw', id, adapter, err: error });
      outcome = { kind: 'failed', reason: 'the upstream call failed unexpectedly', retryable: true };
    }
    if (outcome.kind !== 'succeeded') throw await this.fail(row, outcome);
    return this.succeed(row, payer, price, outcome);
  }

  private providerFor(key: AuthenticatedKey, rules: ImageRules): { adapter: string; provider: ImageProvider } {
    let resolved: { adapter: string; provider: ImageProvider };
    try {
      resolved = this.registry.resolve<ImageProvider>({ capability: 'image', model: rules.model, environment: key.environment });
    } catch (error) {
      if (error instanceof NoLiveAdapterError) {
        throw new DomainError(503, ImageErrorCode.Unavailable, `${rules.model} is not available on this service: its upstream provider is not configured`);
      }
      throw error;
    }
    if (!resolved.provider.available()) {
      throw new DomainError(503, ImageErrorCode.Unavailable, `${rules.model} is temporarily unavailable; try again later`);
    }
    return resolved;
  }

  /** Stores the image, settles, and only then answers: the answer is never sent unpaid. */
  private async succeed(
    row: ImageGenerationEntity,
    payer: PriceContext,
    price: bigint,
    outcome: Extract<ImageOutcome, { kind: 'succeeded' }>,
  ): Promise<ImageGenerationResponse> {
    const generatedAt = this.clock.now();
    const expiresAt = new Date(generatedAt.getTime() + IMAGE_LINK_RETENTION_MS);
    const { bytes } = outcome.image;
    // The link is public and served from our origin: what it serves is judged by its bytes, not
    // by the type the upstream named (an SVG, HTML or a non-image would run or mislead there).
    const mimeType = sniffImageType(bytes);
    if (mimeType === null || !(mimeType in EXTENSIONS)) {
      this.logger.error({ msg: 'the upstream returned an image that is not PNG, JPEG or WebP', id: row.id, namedType: outcome.image.mimeType, bytes: bytes.length });
      throw await this.fail(row, { kind: 'failed', reason: 'the upstream returned an image in a format that is not served (not PNG, JPEG or WebP)', retryable: false });
    }
    const mediaKey = `image/${row.workspaceId}/${row.id.slice('image:'.length)}.${EXTENSIONS[mimeType]}`;
    let link;
    try {
      await this.media.store({ key: mediaKey, body: bytes, contentType: mimeType, workspaceId: row.workspaceId, expiresAt, publicLink: true });
      link = await this.media.publicLink(mediaKey);
    } catch (error) {
      this.logger.error({ msg: 'generated image could not be stored', id: row.id, err: error });
      // Nothing the client can use was made: release, as for any failure before an answer.
      throw await this.fail(row, { kind: 'failed', reason: 'the generated image could not be stored', retryable: true });
    }
    // The price is per image at this size, one image per call: the charge is the hold.
    const charged = this.prices.imageCost(payer, row.model, row.request.size, 1);
    const finished = await this.rows.finish(row.id, {
      status: 'succeeded',
      mediaKey,
      contentType: mimeType,
      chargedMicros: charged < price ? charged : price, // the wallet never charges more than the hold
      completedAt: generatedAt,
      expiresAt,
      updatedAt: this.clock.now(),
    });
    if (!finished) {
      // The abandoned-request sweep ended it (and released the hold) first: no free image goes out.
      await this.media.delete(mediaKey);
      this.metrics.generation(row.model, 'error');
      throw new DomainError(503, ImageErrorCode.UpstreamUnavailable, 'the generation took too long and was abandoned; retry. Nothing was charged.');
    }
    await this.wallet.settle(row.holdId, charged);
    this.metrics.generation(row.model, 'succeeded');
    const outputs: ImageGenerationResponse['outputs'] = { images: [link.url], expiresAt: link.expiresAt.toISOString() };
    if (outcome.text) outputs.text = outcome.text;
    return { id: row.id, model: row.model, status: 'succeeded', outputs };
  }

  /** Releases the hold, records why, and returns the client's error. */
  private async fail(row: ImageGenerationEntity, outcome: Exclude<ImageOutcome, { kind: 'succeeded' }>): Promise<DomainError> {
    await this.wallet.release(row.holdId);
    await this.rows.finish(row.id, { status: 'failed', failureReason: outcome.reason.slice(0, 1000), completedAt: this.clock.now(), updatedAt: this.clock.now() });
    if (outcome.kind === 'refused') {
      this.metrics.generation(row.model, outcome.category === 'safety' ? 'refused_safety' : 'no_image');
      return outcome.category === 'safety'
        ? new DomainError(400, ImageErrorCode.ContentRefused, `the upstream refused this request for safety reasons (${outcome.reason}); change the prompt or the references. Nothing was charged.`)
        : new DomainError(422, ImageErrorCode.NoImage, `the upstream answered without an image (${outcome.reason}). Nothing was charged.`);
    }
    this.metrics.generation(row.model, 'failed');
    if (outcome.retryable) {
      const headers: Record<string, string> = outcome.retryAfterSeconds ? { 'retry-after': String(Math.ceil(outcome.retryAfterSeconds)) } : {};
      return new DomainError(503, ImageErrorCode.UpstreamUnavailable, `image generation failed for now (${outcome.reason}); retry later. Nothing was charged.`, headers);
    }
    return new DomainError(502, ImageErrorCode.UpstreamFailed, `image generation failed (${outcome.reason}). Nothing was charged.`);
  }
}
