import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { KeyEnvironment } from './api-key.entity.js';

/** The caller of a public route, as resolved by ApiKeyGuard. Owned resources carry its id. */
export interface AuthenticatedKey {
  id: string;
  workspaceId: string;
  environment: KeyEnvironment;
}

/** `@CurrentKey() key: AuthenticatedKey` in a controller method. */
export const CurrentKey = createParamDecorator((_: unknown, context: ExecutionContext): AuthenticatedKey => {
  const request = context.switchToHttp().getRequest<{ apiKey?: AuthenticatedKey }>();
  if (!request.apiKey) throw new Error('CurrentKey used on a route that ApiKeyGuard did not authenticate');
  return request.apiKey;
});
