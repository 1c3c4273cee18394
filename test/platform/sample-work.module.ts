import { BullModule, Processor, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import type { JobName, JobOf, QueueName } from '../../src/queue/queue-names.js';
import { Queues } from '../../src/queue/queues.js';
import { type PendingWork, WorkReconciler, type WorkSource } from '../../src/queue/work-reconciler.js';

/**
 * TEST-ONLY: a unit of work kept in PostgreSQL (`test_unit`), moved by its own BullMQ queue,
 * and declared to the WorkReconciler like a domain would (video tasks, deliveries, …).
 * The queue and job names are not in the production enums, hence the casts below.
 */
export const SAMPLE_QUEUE = 'test-units' as unknown as QueueName;
export const SAMPLE_JOB = 'test-unit' as unknown as JobName;

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

interface SampleJobData {
  unitId: string;
}

@Injectable()
export class SampleUnitService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly queues: Queues,
  ) {}

  /** What a domain does after committing its row: enqueue under the deterministic id. */
  enqueue(unitId: string): Promise<void> {
    const data: SampleJobData = { unitId };
    return this.queues.add(SAMPLE_QUEUE, SAMPLE_JOB, data as unknown as JobOf<JobName>, sampleJobId(unitId));
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

@Processor(SAMPLE_QUEUE as unknown as string)
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
      data: { unitId } satisfies SampleJobData as unknown as PendingWork['data'],
    }));
  }
}

@Module({
  imports: [BullModule.registerQueue({ name: SAMPLE_QUEUE as unknown as string })],
  providers: [SampleUnitService, SampleUnitProcessor, SampleUnitSource],
  exports: [SampleUnitService],
})
export class SampleWorkModule {}
