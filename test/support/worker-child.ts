// A worker-only instance of the service in its own process, so a test can kill it for real
// (SIGKILL: no shutdown hooks, no lock release). Environment comes as JSON in SVC_CHILD_ENV.
import { createApp } from '../../src/app/create-app.js';
import { AppConfig } from '../../src/config/app-config.js';

const env = JSON.parse(process.env.SVC_CHILD_ENV ?? '{}') as Record<string, string>;
const app = await createApp(AppConfig.from({ ...env, APP_ROLE: 'worker' }));
await app.init();
process.send?.('ready');
