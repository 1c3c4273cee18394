import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Controller, Get, Injectable, Module, type OnModuleInit, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { notFound } from '../../libs/common/index.js';
import { ErrorDomainsModule } from '../../src/app/error-domains.module.js';
import { Public } from '../../src/modules/identity/index.js';
import type { JobOf } from '../../src/queue/queue-names.js';
import { QueueModule } from '../../src/queue/queue.module.js';
import { Queues } from '../../src/queue/queues.js';
import { type PendingWork, WorkReconciler, type WorkSource } from '../../src/queue/work-reconciler.js';

/**
 * TEST-ONLY: a unit of work kept in PostgreSQL (`test_unit`), moved by its own BullMQ queue,
 * and declared to the platform like a domain would (video tasks, deliveries, …), from this file
 * alone: its queue (QueueModule.forFeature), its job's payload type (JobPayloads), its
 * reconciler source and its error prefix (ErrorDomainsModule.forFeature).
 */
export const SAMPLE_QUEUE = 'test-units';
export const SAMPLE_JOB = 'test-unit';
export const SAMPLE_ERROR_DOMAIN = 'sample';

declare module '../../src/queue/queue-names.js' {
  interface JobPayloads {
    'test-unit': { unitId: string };
  }
}

export const SAMPLE_UNIT_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS test_unit (
    id uuid PRIMARY KEY,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    fail_first boolean NOT NULL DEFAULT false,
    delay_ms int NOT NULL DEFAULT 0,
    attempts int NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`;

export const sampleJobId = (unitId: string): string => `test-unit:${unitId}`;

type SampleJobData = JobOf<typeof SAMPLE_JOB>;

@Injectable()
export class SampleUnitService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly queues: Queues,
  ) {}

  /** What a domain does after committing its row: enqueue under the deterministic id. */
  enqueue(unitId: string): Promise<void> {
    return this.queues.add(SAMPLE_QUEUE, SAMPLE_JOB, { unitId }, sampleJobId(unitId));
  }

  async create(): Promise<string> {
    const id = randomUUID();
    await this.db.query(`INSERT INTO test_unit (id) VALUES ($1)`, [id]);
    await this.enqueue(id);
    return id;
  }

  async status(unitId: string): Promise<string | undefined> {
    const rows: Array<{ status: string }> = await this.db.query(`SELECT status FROM test_unit WHERE id = $1`, [unitId]);
    return rows[0]?.status;
  }

  async findPending(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM test_unit WHERE status = 'pending' ORDER BY id`);
    return rows.map((r) => r.id);
  }

  /** Idempotent: a unit already done stays done; every run is counted. */
  async work(unitId: string): Promise<void> {
    // Wrapped in a SELECT: TypeORM answers a bare UPDATE with [rows, rowCount], not rows.
    const rows: Array<{ attempts: number; fail_first: boolean; delay_ms: number }> = await this.db.query(
      `WITH u AS (UPDATE test_unit SET attempts = attempts + 1, updated_at = now() WHERE id = $1 RETURNING attempts, fail_first, delay_ms) SELECT * FROM u`,
      [unitId],
    );
    const row = rows[0];
    if (!row) return;
    if (row.fail_first && row.attempts === 1) throw new Error(`unit ${unitId}: simulated failure on the first run`);
    // A slow unit, to be caught mid-run by a shutdown.
    if (row.delay_ms > 0) await new Promise((resolve) => setTimeout(resolve, row.delay_ms));
    await this.db.query(`UPDATE test_unit SET status = 'done' WHERE id = $1`, [unitId]);
  }
}

@Processor(SAMPLE_QUEUE)
export class SampleUnitProcessor extends WorkerHost {
  constructor(private readonly units: SampleUnitService) {
    super();
  }

  async process(job: Job<SampleJobData>): Promise<void> {
    await this.units.work(job.data.unitId);
  }
}

@Injectable()
export class SampleUnitSource implements WorkSource, OnModuleInit {
  readonly name = 'test-units';

  constructor(
    private readonly reconciler: WorkReconciler,
    private readonly units: SampleUnitService,
  ) {}

  onModuleInit(): void {
    this.reconciler.register(this);
  }

  async findPending(): Promise<PendingWork[]> {
    return (await this.units.findPending()).map((unitId) => ({
      queue: SAMPLE_QUEUE,
      jobName: SAMPLE_JOB,
      jobId: sampleJobId(unitId),
      data: { unitId },
    }));
  }
}

/** Its routes: errors on them, even those raised before the handler (the key guard), read `sample.…`. */
@Controller('test-units')
export class SampleUnitController {
  constructor(private readonly units: SampleUnitService) {}

  @Post()
  async create(): Promise<{ id: string }> {
    return { id: await this.units.create() };
  }

  @Public()
  @Get(':id')
  async get(@Param('id', ParseUUIDPipe) id: string): Promise<{ id: string; status: string }> {
    const status = await this.units.status(id);
    if (status === undefined) throw notFound('unit');
    return { id, status };
  }
}

@Module({
  imports: [
    QueueModule.forFeature({ queues: [SAMPLE_QUEUE] }),
    ErrorDomainsModule.forFeature({ domain: SAMPLE_ERROR_DOMAIN, pathPrefixes: ['/test-units/'] }),
  ],
  controllers: [SampleUnitController],
  providers: [SampleUnitService, SampleUnitProcessor, SampleUnitSource],
  exports: [SampleUnitService],
})
export class SampleWorkModule {}
