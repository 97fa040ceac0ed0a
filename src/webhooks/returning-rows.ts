import type { EntityManager } from 'typeorm';

/**
 * Runs a data-changing statement with RETURNING and gives back its rows.
 * TypeORM's PostgreSQL driver answers `manager.query` for an UPDATE or
 * DELETE with `[rows, rowCount]` instead of the rows, unlike every other
 * statement; this hides the difference.
 */
export async function returningRows<Row>(manager: EntityManager, sql: string, parameters: unknown[]): Promise<Row[]> {
  const result: unknown = await manager.query(sql, parameters);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as Row[];
  }
  return result as Row[];
}
