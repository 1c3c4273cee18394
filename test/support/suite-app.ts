import { after, before } from 'node:test';
import type { KeyEnvironment } from '../../src/modules/identity/api-key.entity.js';
import { createAccount, type TestAccount } from './factories.js';
import { bootTestApp, type TestApp, type TestAppOptions } from './test-app.js';

/** `environment` is the account's key's (`live` unless said). */
export type FundedAppOptions = TestAppOptions & { creditUsd: number; environment?: KeyEnvironment };

export interface FundedApp {
  t: TestApp;
  account: TestAccount;
}

/**
 * The usual suite fixture: its own app and one funded account, booted before the tests of the
 * enclosing `describe` and closed after them. `ready` receives both (assign them to the suite's
 * variables, build clients on them).
 */
export function fundedAppForSuite(
  options: FundedAppOptions | (() => FundedAppOptions),
  ready: (booted: FundedApp) => void,
): void {
  let app: TestApp | undefined;
  before(async () => {
    // A function when the options depend on an earlier hook (a fake upstream's URL).
    const { creditUsd, environment, ...appOptions } = typeof options === 'function' ? options() : options;
    app = await bootTestApp(appOptions);
    ready({ t: app, account: await createAccount(app, { creditUsd, environment }) });
  });
  after(async () => {
    await app?.close();
  });
}
