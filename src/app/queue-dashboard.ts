import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BearerToken } from '../../libs/common/index.js';
import type { AppConfig } from '../config/app-config.js';
import { QUEUE_DASHBOARD_PATH, QueueDashboardCookie } from '../queue/queue-dashboard-cookie.js';
import { Queues } from '../queue/queues.js';
import { RegisteredQueues } from '../queue/registered-queues.js';

/**
 * Mounts bull-board at /admin/queues over every queue the modules registered
 * (QueueModule.forFeature → RegisteredQueues), behind the admin token: an `Authorization: Bearer
 * <ADMIN_TOKEN>` header (constant-time, as AdminGuard) or the dashboard cookie. Anything else is
 * 401 `admin.unauthorized` in the usual envelope. Called by createApp before the app listens
 * (queues are registered by then).
 */
export async function mountQueueDashboard(app: NestFastifyApplication, config: AppConfig): Promise<void> {
  const registered = app.get(RegisteredQueues, { strict: false });
  const queues = app.get(Queues, { strict: false });
  const cookie = new QueueDashboardCookie(config);
  const adminToken = new BearerToken(config.env.ADMIN_TOKEN);

  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: registered
      .list()
      .sort()
      .map((name) => new BullMQAdapter(queues.get(name))),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'svc-gateway queues' } },
  });

  const plugin = serverAdapter.registerPlugin();
  await app.register(async (scope: FastifyInstance) => {
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (adminToken.matches(request.headers.authorization) || cookie.accepts(request.headers.cookie)) return;
      await reply
        .code(401)
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', 'no-store')
        .send({ error: { code: 'admin.unauthorized', message: 'a valid admin token is required: open the queue dashboard from the admin console (/admin), or send Authorization: Bearer <ADMIN_TOKEN>' } });
    });
    await scope.register(plugin, { prefix: QUEUE_DASHBOARD_PATH });
  });
}
