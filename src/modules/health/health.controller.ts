import { Controller, Get, Header, Headers, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiServiceUnavailableResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult, type HealthIndicatorResult, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { Redis } from 'ioredis';
import { BearerToken, DomainError } from '../../../libs/common/index.js';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { AppConfig } from '../../config/app-config.js';
import { REDIS } from '../../queue/redis.provider.js';
import { Public } from '../identity/index.js';
import { Metrics } from '../../observability/metrics.service.js';

@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  /** METRICS_TOKEN, when set: scrapers then send it as a bearer token. */
  private readonly metricsToken: BearerToken | null;

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly metrics: Metrics,
    @Inject(REDIS) private readonly redis: Redis,
    config: AppConfig,
  ) {
    this.metricsToken = config.env.METRICS_TOKEN ? new BearerToken(config.env.METRICS_TOKEN) : null;
  }

  @Get('health/live')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ description: '`{status:"ok"}`' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('health/ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: PostgreSQL and Redis answer' })
  @ApiServiceUnavailableResponse({ description: 'a dependency is down; the body names it' })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.database.pingCheck('postgres', { timeout: 2000 }), () => this.redisCheck()]);
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({
    summary: 'Prometheus metrics: HTTP, upstream calls, jobs, queue depths, wallet holds, webhook deliveries',
    description: 'Open unless METRICS_TOKEN is set; then `Authorization: Bearer <METRICS_TOKEN>` is required.',
  })
  @ApiBearerAuth()
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format 0.0.4', schema: { type: 'string' } })
  @ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: '`request.unauthorized`: METRICS_TOKEN is set and the bearer token does not match' })
  scrape(@Headers('authorization') authorization?: string): Promise<string> {
    if (this.metricsToken && !this.metricsToken.matches(authorization)) {
      throw new DomainError(401, 'unauthorized', 'a valid metrics token is required (METRICS_TOKEN)');
    }
    return this.metrics.registry.metrics();
  }

  private async redisCheck(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('redis');
    try {
      const pong = await Promise.race([
        this.redis.ping(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout after 2000 ms')), 2000).unref()),
      ]);
      return pong === 'PONG' ? indicator.up() : indicator.down({ message: `unexpected answer ${pong}` });
    } catch (error) {
      return indicator.down({ message: String(error) });
    }
  }
}
