import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { handWrittenSchemas } from './openapi-schemas.js';

/**
 * Tags in the order a client reads them: the generation domains first, then the account's
 * plumbing, operator routes last. Every route carries exactly one of these
 * (test/platform/openapi-completeness.test.ts).
 */
export const OPENAPI_TAGS: ReadonlyArray<readonly [name: string, description: string]> = [
  ['video', 'Omni video tasks and the shared task routes (omni: and alt: ids)'],
  ['alternate video', 'Alternate-provider video tasks (their own error envelope)'],
  ['audio', 'Speech and dialogue tasks, the speech stream, models, voices'],
  ['realtime', 'Realtime speech sessions (the WebSocket frames: docs/realtime.md)'],
  ['text', 'Chat-Completions- and Responses-style text generation, sync or SSE'],
  ['images', 'Image generation (synchronous)'],
  ['webhooks', 'Webhook endpoints and their deliveries'],
  ['wallet', "The calling key's wallet"],
  ['media', 'Signed and public media links'],
  ['operations', 'Health and metrics'],
  ['admin', 'Operator routes (ADMIN_TOKEN)'],
  ['internal', 'Provider callbacks; not for clients'],
];

/** OpenAPI at /docs (UI) and /docs/json; every route and DTO is described by decorators. */
export function setupOpenApi(app: NestFastifyApplication): void {
  const builder = new DocumentBuilder()
    .setTitle('Media and text generation gateway')
    .setDescription(
      'Video, audio, text and image generation behind one prepaid wallet. Public routes take ' +
        '`Authorization: Bearer svc_live_…`; admin routes take `Authorization: Bearer <ADMIN_TOKEN>`. ' +
        'Errors are `{error:{code,message}}` with a dotted code whose prefix is the route domain (the ' +
        'alternate-provider routes use their own envelope); each error response names its codes as examples.',
    )
    .setVersion('1.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'svc_live_… / svc_test_…', description: 'Workspace API key (svc_live_… or svc_test_…)' }, 'api-key')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque token', description: 'ADMIN_TOKEN' }, 'admin');
  for (const [name, description] of OPENAPI_TAGS) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build());
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...handWrittenSchemas() } };
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json', yamlDocumentUrl: 'docs/yaml' });
}
