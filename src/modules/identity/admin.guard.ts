import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { BearerToken, DomainError } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';

/** Admin routes: the bearer token must equal ADMIN_TOKEN, compared in constant time. */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly token: BearerToken;

  constructor(config: AppConfig) {
    this.token = new BearerToken(config.env.ADMIN_TOKEN);
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization;
    if (!this.token.matches(header)) throw new DomainError(401, 'admin.unauthorized', 'a valid admin token is required');
    return true;
  }
}
