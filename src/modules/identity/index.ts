// Identity's public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { IdentityModule } from './identity.module.js';
export { type ApiKey, IdentityService, type IssuedApiKey, type Workspace } from './identity.service.js';
export type { ApiKeyStatus, KeyEnvironment } from './api-key.entity.js';
export { type AuthenticatedKey, CurrentKey } from './authenticated-key.js';
export { AdminRoute, ApiKeyRoute, Public } from './route-access.js';
