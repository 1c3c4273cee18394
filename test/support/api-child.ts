// An API-only instance of the service in its own process (its own memory, its own Redis
// connections), listening on SVC_CHILD_ENV's PORT. Environment comes as JSON in SVC_CHILD_ENV.
// Says `{ ready: true }` once listening; answers `{ type: 'keycache' }` with its key cache's state.
import { createApp } from '../../src/app/create-app.js';
import { AppConfig } from '../../src/config/app-config.js';
import { KeyInvalidations } from '../../src/modules/identity/key-invalidations.js';
import { Metrics } from '../../src/observability/metrics.service.js';

const env = JSON.parse(process.env.SVC_CHILD_ENV ?? '{}') as Record<string, string>;
const app = await createApp(AppConfig.from({ ...env, APP_ROLE: 'api' }));
await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });

const invalidations = app.get(KeyInvalidations);
const metrics = app.get(Metrics);

process.on('message', (message: { type?: string; id?: number }) => {
  if (message.type !== 'keycache') return;
  void metrics.apiKeyCache.get().then((counter) => {
    const outcomes: Record<string, number> = { hit: 0, miss: 0, bypass: 0 };
    for (const value of counter.values) outcomes[String(value.labels.outcome)] = value.value;
    process.send?.({ id: message.id, subscribed: invalidations.ready, entries: invalidations.cache.size, ...invalidations.counters(), ...outcomes });
  });
});
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
process.send?.({ ready: true });
