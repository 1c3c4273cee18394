import { type PriceContext, StaticPriceCatalogue, type TextModel, type VideoModel, type VideoResolution } from '../../src/modules/billing/price-catalogue.js';

const LIST = new StaticPriceCatalogue();
/** The static list prices every payer alike; tests that assert list prices need no real one. */
const ANY_PAYER: PriceContext = { workspaceId: 'any-workspace', apiKeyId: 'any-key', environment: 'live' };

/** What a text request costs at the default list price (no PriceCatalogue override). */
export const textListCost = (model: TextModel, inputTokens: number, outputTokens: number): bigint => LIST.textCost(ANY_PAYER, model, inputTokens, outputTokens);

/** What a video of `seconds` costs at the default list price. */
export const videoListCost = (model: VideoModel, resolution: VideoResolution, seconds: number): bigint => LIST.videoCost(ANY_PAYER, model, resolution, seconds);
