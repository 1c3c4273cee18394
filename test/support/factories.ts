import { usdToMicros } from '../../libs/common/index.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import type { KeyEnvironment } from '../../src/modules/identity/api-key.entity.js';
import { IdentityService } from '../../src/modules/identity/identity.service.js';
import type { TestApp } from './test-app.js';

export interface TestAccount {
  workspaceId: string;
  keyId: string;
  key: string;
}

/** A workspace with one key and, optionally, money — through the same services admin uses. */
export async function createAccount(
  t: TestApp,
  options: { creditUsd?: number; environment?: KeyEnvironment; name?: string } = {},
): Promise<TestAccount> {
  const identity = t.app.get(IdentityService);
  const environment = options.environment ?? 'live';
  const workspace = await identity.createWorkspace(options.name ?? 'test workspace');
  const { apiKey, key } = await identity.issueApiKey(workspace.id, 'test key', environment);
  if (options.creditUsd) {
    await t.app.get(WalletService).credit(workspace.id, environment, usdToMicros(options.creditUsd), `test-credit-${workspace.id}`);
  }
  return { workspaceId: workspace.id, keyId: apiKey.id, key };
}

/** A second key on an existing workspace. */
export async function issueKey(t: TestApp, workspaceId: string, environment: KeyEnvironment = 'live'): Promise<{ keyId: string; key: string }> {
  const { apiKey, key } = await t.app.get(IdentityService).issueApiKey(workspaceId, 'another key', environment);
  return { keyId: apiKey.id, key };
}
