import { Controller, Get, Header, Headers, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult, type HealthIndicatorResult, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { Redis } from 'ioredis';
import { BearerToken, DomainError, withTimeout } from '../../../libs/common/index.js';
import { ApiErrors } from '../../app/openapi-errors.js';
import { namedSchema, type SchemaObject } from '../../app/openapi-schemas.js';
import { AppConfig } from '../../config/app-config.js';
import { REDIS } from '../../queue/redis.provider.js';
import { Public } from '../identity/index.js';
import { Metrics } from '../../observability/metrics.service.js';

/** One dependency in the readiness report. */
const INDICATOR: SchemaObject = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['up', 'down'] }, message: { type: 'string', description: 'Why it is down' } },
};
const INDICATORS = (description: string): SchemaObject => ({ type: 'object', description, additionalProperties: INDICATOR });

/**
 * terminus's readiness report (HealthCheckResult), named: the same body on 200 and 503. Its own
 * documentation is off (`swaggerDocumentation: false`) because it writes the schema inline.
 */
const HEALTH_REPORT = namedSchema('HealthReport', {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'error', 'shutting_down'] },
    info: INDICATORS('The dependencies that answer, by name (`postgres`, `redis`)'),
    error: INDICATORS('The dependencies that do not, with a message'),
    details: INDICATORS('Both together'),
  },
});

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
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: PostgreSQL and Redis answer' })
  @ApiOkResponse({ description: 'PostgreSQL and Redis answer', schema: HEALTH_REPORT })
  @ApiServiceUnavailableResponse({ description: 'a dependency is down; the body names it', schema: HEALTH_REPORT })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    try {
      return await this.health.check([() => this.database.pingCheck('postgres', { timeout: 2000 }), () => this.redisCheck()]);
    } catch (error) {
      // terminus throws its report as a 503; answered here as it is, not as the error filter's 500.
      if (!(error instanceof ServiceUnavailableException)) throw error;
      void reply.status(503);
      return error.getResponse() as HealthCheckResult;
    }
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({
    summary: 'Prometheus metrics: HTTP, upstream calls, jobs, queue depths, wallet holds, webhook deliveries',
    // Described in prose, not as a security scheme: the route is open unless the operator sets the token.
    description: 'Open unless METRICS_TOKEN is set; then `Authorization: Bearer <METRICS_TOKEN>` is required.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format 0.0.4', schema: { type: 'string' } })
  @ApiErrors(401, [['request.unauthorized', 'METRICS_TOKEN is set and the bearer token does not match']])
  scrape(@Headers('authorization') authorization?: string): Promise<string> {
    if (this.metricsToken && !this.metricsToken.matches(authorization)) {
      throw new DomainError(401, 'unauthorized', 'a valid metrics token is required (METRICS_TOKEN)');
    }
    return this.metrics.registry.metrics();
  }

  private async redisCheck(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('redis');
    try {
      const pong = await withTimeout(this.redis.ping(), 2000, 'Redis PING');
      return pong === 'PONG' ? indicator.up() : indicator.down({ message: `unexpected answer ${pong}` });
    } catch (error) {
      return indicator.down({ message: String(error) });
    }
  }
}
