import { Global, Injectable, Module } from '@nestjs/common';
import {
  PRICE_CATALOGUE_OVERRIDE,
  type PriceContext,
  StaticPriceCatalogue,
  type TextModel,
  type VideoModel,
  type VideoResolution,
} from '../../src/modules/billing/price-catalogue.js';

/**
 * TEST-ONLY: a price list that charges some workspaces twice the list price for text and video,
 * contributed the way an extension overrides prices: a PriceCatalogue subclass provided as
 * PRICE_CATALOGUE_OVERRIDE by a global module imported next to the app's modules.
 */
@Injectable()
export class DoubleRateCatalogue extends StaticPriceCatalogue {
  /** Workspaces charged double; tests add theirs after creating them. */
  readonly doubleRate = new Set<string>();

  override textCost(context: PriceContext, model: TextModel, inputTokens: number, outputTokens: number): bigint {
    return this.rate(context) * super.textCost(context, model, inputTokens, outputTokens);
  }

  override videoCost(context: PriceContext, model: VideoModel, resolution: VideoResolution, seconds: number): bigint {
    return this.rate(context) * super.videoCost(context, model, resolution, seconds);
  }

  private rate(context: PriceContext): bigint {
    return this.doubleRate.has(context.workspaceId) ? 2n : 1n;
  }
}

@Global()
@Module({
  providers: [DoubleRateCatalogue, { provide: PRICE_CATALOGUE_OVERRIDE, useExisting: DoubleRateCatalogue }],
  exports: [PRICE_CATALOGUE_OVERRIDE],
})
export class WorkspacePricesModule {}
