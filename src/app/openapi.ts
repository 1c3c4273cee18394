import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** OpenAPI at /docs (UI) and /docs/json; every route and DTO is described by decorators. */
export function setupOpenApi(app: NestFastifyApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Media and text generation gateway')
      .setDescription(
        'Video, audio, text and image generation behind one prepaid wallet. Public routes take ' +
          '`Authorization: Bearer svc_live_…`; admin routes take `Authorization: Bearer <ADMIN_TOKEN>`. ' +
          'Errors are `{error:{code,message}}` with a dotted code whose prefix is the route domain.',
      )
      .setVersion('1.0.0')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'svc_live_… / svc_test_…', description: 'Workspace API key (svc_live_… or svc_test_…)' }, 'api-key')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque token', description: 'ADMIN_TOKEN' }, 'admin')
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json', yamlDocumentUrl: 'docs/yaml' });
}
