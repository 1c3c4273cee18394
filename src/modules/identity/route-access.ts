import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { AdminGuard } from './admin.guard.js';

/**
 * Every route needs an API key unless it says otherwise: the global ApiKeyGuard enforces it,
 * so a new route cannot be left open by forgetting a decorator.
 */
export const ROUTE_ACCESS = 'svc:route-access';
export type RouteAccess = 'api-key' | 'public' | 'admin';

/** No credentials: health, metrics, docs, signed media links. */
export const Public = () => SetMetadata(ROUTE_ACCESS, 'public' satisfies RouteAccess);

/** `Authorization: Bearer <ADMIN_TOKEN>` instead of an API key. */
export const AdminRoute = () =>
  applyDecorators(SetMetadata(ROUTE_ACCESS, 'admin' satisfies RouteAccess), UseGuards(AdminGuard), ApiSecurity('admin'));

/** Documents the API-key requirement in OpenAPI. */
export const ApiKeyRoute = () => ApiBearerAuth('api-key');
