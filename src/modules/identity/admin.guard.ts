import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';

/** Admin routes: the bearer token must equal ADMIN_TOKEN, compared in constant time. */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(config: AppConfig) {
    this.expected = createHash('sha256').update(config.env.ADMIN_TOKEN).digest();
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization;
    // The scheme is case-insensitive (RFC 9110), as on API-key routes.
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
    // Hashing both sides gives equal lengths, so timingSafeEqual leaks nothing about the token.
    const given = createHash('sha256').update(token).digest();
    if (token === '' || !timingSafeEqual(given, this.expected)) {
      throw new DomainError(401, 'admin.unauthorized', 'a valid admin token is required');
    }
    return true;
  }
}
