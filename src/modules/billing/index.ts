// Billing's public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { BillingModule } from './billing.module.js';
export { type HoldSummary, type IfUnrecorded, type LedgerEntry, toWalletResource, WalletService, type WalletResource } from './wallet.service.js';
export type { HoldInput, HoldResolution, LedgerFilter } from './wallet.repository.js';
export type { HoldStatus } from './hold.entity.js';
export type { LedgerKind } from './ledger-entry.entity.js';
export { WalletResponseDto } from './wallet.dto.js';
export * from './price-catalogue.js';
