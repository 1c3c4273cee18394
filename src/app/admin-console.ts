import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm run build` (vite, console/vite.config.ts) writes the console: dist/console beside dist/src. */
export const ADMIN_CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));
export const ADMIN_CONSOLE_PATH = '/admin/';

/**
 * The console's own pages may run only its own scripts and talk only to this origin; it is
 * never framed (clickjacking), and links leave no referrer (the console's URLs carry no secret,
 * but ids of workspaces need not travel).
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/**
 * Serves the admin console (a static single-page app, docs/admin-api.md › Console) at /admin/.
 * It holds nothing secret: the admin token is typed by the operator and every call it makes goes
 * to /admin/v1 with it. Only the files the build wrote are routes (no wildcard), so unknown
 * /admin/v1 paths keep answering the API's own 404. Without a build, /admin says how to make one.
 */
export async function mountAdminConsole(app: NestFastifyApplication, dir = ADMIN_CONSOLE_DIR): Promise<void> {
  if (!existsSync(join(dir, 'index.html'))) {
    await app.register(async (scope: FastifyInstance) => {
      scope.get('/admin', async (_request, reply: FastifyReply) =>
        reply
          .code(404)
          .header('content-type', 'application/json; charset=utf-8')
          .send({ error: { code: 'admin.not_found', message: 'the admin console is not built (no dist/console/index.html): run npm run build' } }),
      );
    });
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    prefix: ADMIN_CONSOLE_PATH,
    wildcard: false,
    index: ['index.html'],
    decorateReply: false,
    cacheControl: false,
    setHeaders: (response, path) => {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) void response.header(name, value);
      // Built assets carry a content hash in their name; the page itself must be fetched anew.
      void response.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
