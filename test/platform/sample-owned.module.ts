import { Body, Controller, Get, HttpCode, Injectable, Module, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { notFound } from '../../libs/common/index.js';
import { entityManagerOf, inTransaction, type TransactionHandle } from '../../src/database/transaction.js';
import { BillingModule } from '../../src/modules/billing/billing.module.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { type AuthenticatedKey, CurrentKey } from '../../src/modules/identity/authenticated-key.js';
import { ApiKeyRoute, Public } from '../../src/modules/identity/route-access.js';

/**
 * TEST-ONLY: a minimal owned resource shaped like a real domain (DTO → hold → row in one
 * transaction → answer; reads filtered by the API key id). Tests pass it to bootTestApp's
 * `imports` and create its table with SAMPLE_OWNED_TABLE_SQL; it never ships.
 */
export const SAMPLE_OWNED_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS test_owned (
    id uuid PRIMARY KEY,
    api_key_id uuid NOT NULL REFERENCES api_key (id),
    workspace_id uuid NOT NULL REFERENCES workspace (id),
    label text NOT NULL,
    hold_id uuid NOT NULL REFERENCES hold (id),
    created_at timestamptz NOT NULL DEFAULT now()
  )`;

@Entity('test_owned')
export class SampleOwnedEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'api_key_id' })
  apiKeyId!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  label!: string;

  @Column('uuid', { name: 'hold_id' })
  holdId!: string;
}

export class SampleOptionsDto {
  @IsOptional() @IsBoolean()
  loud?: boolean;
}

export class CreateSampleOwnedDto {
  @IsString() @MaxLength(100)
  label!: string;

  @IsInt() @Min(1) @Max(1_000_000_000)
  costMicros!: number;

  @IsOptional() @ValidateNested() @Type(() => SampleOptionsDto)
  options?: SampleOptionsDto;
}

export interface SampleOwnedResource {
  id: string;
  label: string;
  holdId: string;
}

const toResource = (row: SampleOwnedEntity): SampleOwnedResource => ({ id: row.id, label: row.label, holdId: row.holdId });

@Injectable()
export class SampleOwnedRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Ownership is in the signature: a row of another key is as absent as a missing one. */
  findOwned(apiKeyId: string, id: string): Promise<SampleOwnedEntity | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return Promise.resolve(null);
    return this.db.manager.findOneBy(SampleOwnedEntity, { apiKeyId, id });
  }

  transaction<T>(work: (tx: TransactionHandle) => Promise<T>): Promise<T> {
    return inTransaction(this.db, work);
  }

  async insert(tx: TransactionHandle, row: SampleOwnedEntity): Promise<SampleOwnedEntity> {
    const manager = entityManagerOf(tx);
    return manager.save(manager.create(SampleOwnedEntity, row));
  }
}

@Injectable()
export class SampleOwnedService {
  constructor(
    private readonly repository: SampleOwnedRepository,
    private readonly wallet: WalletService,
  ) {}

  /** The creation flow of DESIGN §6 in miniature: hold and row commit together or not at all. */
  create(key: AuthenticatedKey, dto: CreateSampleOwnedDto): Promise<SampleOwnedResource> {
    return this.repository.transaction(async (tx) => {
      const id = randomUUID();
      const holdId = await this.wallet.hold(
        {
          workspaceId: key.workspaceId,
          environment: key.environment,
          apiKeyId: key.id,
          amountMicros: BigInt(dto.costMicros),
          subjectType: 'test_owned',
          subjectId: id,
        },
        tx,
      );
      return toResource(await this.repository.insert(tx, { id, apiKeyId: key.id, workspaceId: key.workspaceId, label: dto.label, holdId }));
    });
  }

  async get(key: AuthenticatedKey, id: string): Promise<SampleOwnedResource> {
    const row = await this.repository.findOwned(key.id, id);
    if (!row) throw notFound('test resource');
    return toResource(row);
  }
}

@ApiTags('test-only')
@ApiKeyRoute()
@Controller('api/svc/v1/test-owned')
export class SampleOwnedController {
  constructor(private readonly service: SampleOwnedService) {}

  @Post()
  @HttpCode(200)
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateSampleOwnedDto): Promise<SampleOwnedResource> {
    return this.service.create(key, dto);
  }

  @Get(':id')
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<SampleOwnedResource> {
    return this.service.get(key, id);
  }
}

/** A route whose handler fails the way a bug would, to see what the client gets. */
@ApiTags('test-only')
@Public()
@Controller('api/svc/v1/test-failures')
export class SampleFailureController {
  static readonly SECRET = 'connection string postgres://user:hunter2@db/secret';

  @Get('unexpected')
  unexpected(): never {
    throw new TypeError(`something broke: ${SampleFailureController.SECRET}`);
  }
}

@Module({
  imports: [TypeOrmModule.forFeature([SampleOwnedEntity]), BillingModule],
  controllers: [SampleOwnedController, SampleFailureController],
  providers: [SampleOwnedRepository, SampleOwnedService],
})
export class SampleOwnedModule {}
