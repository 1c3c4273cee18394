// An API-only instance of the service in its own process, listening on env PORT, so a test can
// kill it mid-stream for real (SIGKILL: no shutdown hooks). Environment comes as JSON in SVC_CHILD_ENV.
import { createApp } from '../../../src/app/create-app.js';
import { AppConfig } from '../../../src/config/app-config.js';

const env = JSON.parse(process.env.SVC_CHILD_ENV ?? '{}') as Record<string, string>;
const app = await createApp(AppConfig.from({ ...env, APP_ROLE: 'api' }));
await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });
process.send?.('ready');
