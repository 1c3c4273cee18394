import { Logger } from '@nestjs/common';
import type { EntityManager, EntityTarget, ObjectLiteral, QueryDeepPartialEntity } from 'typeorm';

/** Every task's life, at info: each applied change of status or phase (in a job, the line carries the job's ids). */
const taskLog = new Logger('TaskState');

/**
 * What a row must currently be for an update to apply. `phase` may list `null` (no phase);
 * `also` adds a domain's own conditions, as SQL over the table's columns with their parameters.
 */
export interface CompareAndSetConditions<Status extends string, Phase extends string> {
  status?: readonly Status[];
  phase?: ReadonlyArray<Phase | null>;
  also?: ReadonlyArray<{ sql: string; params?: ObjectLiteral }>;
}

/**
 * Applies `changes` to the row `id` only while it still matches `conditions`, in one UPDATE, and
 * says whether it did: a duplicate or stale job that lost the race changes nothing.
 */
export async function compareAndSet<E extends ObjectLiteral, Status extends string, Phase extends string>(
  manager: EntityManager,
  entity: EntityTarget<E>,
  id: string,
  conditions: CompareAndSetConditions<Status, Phase>,
  changes: QueryDeepPartialEntity<E>,
): Promise<boolean> {
  const qb = manager.createQueryBuilder().update(entity).set(changes).where('id = :id', { id });
  if (conditions.status) qb.andWhere('status IN (:...statuses)', { statuses: conditions.status });
  if (conditions.phase) {
    const named = conditions.phase.filter((p): p is Phase => p !== null);
    const parts = [named.length ? 'phase IN (:...phases)' : null, conditions.phase.includes(null) ? 'phase IS NULL' : null].filter(Boolean);
    qb.andWhere(`(${parts.join(' OR ')})`, { phases: named });
  }
  for (const condition of conditions.also ?? []) qb.andWhere(condition.sql, condition.params);
  const result = await qb.execute();
  const applied = (result.affected ?? 0) > 0;
  const { status, phase } = changes as { status?: unknown; phase?: unknown };
  if (applied && (status !== undefined || phase !== undefined)) {
    taskLog.log({ msg: 'task state', taskId: id, ...(status !== undefined ? { status } : {}), ...(phase !== undefined ? { phase } : {}) });
  }
  return applied;
}
