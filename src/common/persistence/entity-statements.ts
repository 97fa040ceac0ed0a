import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { preparedStatement, type PreparedStatement } from './prepared-statement';

/** Past this many distinct column sets, update statements are still built but no longer remembered. */
const MAX_UPDATE_SHAPES = 256;

/**
 * The row statements of one entity, built once from TypeORM's own metadata
 * (column names, types, transformers), for the writes on a hot path:
 * TypeORM's `findOne`/`save`/`insert` build their SQL anew on every call
 * and `save` reads the row again before writing it. Values go through
 * the driver's own conversions (`preparePersistentValue` writes jsonb as
 * JSON text, `prepareHydratedValue` reads it back), so a row written or read
 * here is the row TypeORM would have written or read.
 */
export class EntityStatements<Entity extends ObjectLiteral> {
  /** `INSERT INTO <table> (<every column>) VALUES ($1, …)`. */
  readonly insert: PreparedStatement;
  /** `SELECT <every column> FROM <table>`, to which a caller appends its own conditions. */
  readonly selectAll: string;
  private readonly columns: ColumnMetadata[];
  private readonly key: ColumnMetadata;
  private readonly create: () => Entity;
  /** What each hydrated entity held when it was read, column by column, so an update writes only what changed. */
  private readonly snapshots = new WeakMap<Entity, unknown[]>();
  /** UPDATE statements by the set of columns they write (in practice a handful per entity). */
  private readonly updates = new Map<string, PreparedStatement>();
  private readonly updateSql: (columns: ColumnMetadata[]) => string;

  constructor(
    private readonly dataSource: DataSource,
    target: EntityTarget<Entity>,
  ) {
    const metadata = dataSource.getMetadata(target);
    const [key, ...more] = metadata.primaryColumns;
    if (key === undefined || more.length > 0) throw new Error(`${metadata.name} needs exactly one primary column`);
    this.key = key;
    this.columns = metadata.columns;
    this.create = () => metadata.create() as Entity;
    const table = dataSource.driver.escape(metadata.tableName);
    const name = (column: ColumnMetadata): string => dataSource.driver.escape(column.databaseName);
    this.selectAll = `SELECT ${this.columns.map(name).join(', ')} FROM ${table}`;
    this.insert = preparedStatement(
      `INSERT INTO ${table} (${this.columns.map(name).join(', ')}) VALUES (${this.columns.map((_, i) => `$${i + 1}`).join(', ')})`,
    );
    this.updateSql = (columns) =>
      `UPDATE ${table} SET ${columns.map((column, i) => `${name(column)} = $${i + 2}`).join(', ')} WHERE ${name(key)} = $1`;
  }

  /** A statement of its own: `selectAll` followed by `conditions` (e.g. `WHERE id = $1 FOR UPDATE`). */
  select(conditions: string): PreparedStatement {
    return preparedStatement(`${this.selectAll} ${conditions}`);
  }

  /** The entity of a row read with `selectAll`. */
  hydrate(row: Record<string, unknown>): Entity {
    const entity = this.create() as Record<string, unknown>;
    for (const column of this.columns) {
      entity[column.propertyName] = this.dataSource.driver.prepareHydratedValue(row[column.databaseName], column);
    }
    this.snapshots.set(entity as Entity, this.comparable(entity as Entity));
    return entity as Entity;
  }

  /** The values of `insert`, in its column order. The entity must be complete: no column falls back to its default. */
  insertValues(entity: Entity): unknown[] {
    return this.columns.map((column) => {
      if ((entity as Record<string, unknown>)[column.propertyName] === undefined && !column.isNullable) {
        throw new Error(`${column.propertyName} must be set before the row is inserted`);
      }
      return this.persistent(entity, column);
    });
  }

  /**
   * `UPDATE <table> SET <changed columns> WHERE <key> = $1` and its values:
   * only the columns whose value differs from what `hydrate` read (every
   * column for an entity not read through it); null when nothing changed.
   */
  updateOf(entity: Entity): { statement: PreparedStatement; values: unknown[] } | null {
    const before = this.snapshots.get(entity);
    const now = this.comparable(entity);
    const changed = this.columns.filter(
      (column, i) => column !== this.key && (before === undefined || before[i] !== now[i]),
    );
    if (changed.length === 0) return null;
    const shape = changed.map((column) => column.databaseName).join(',');
    let statement = this.updates.get(shape);
    if (statement === undefined) {
      statement = preparedStatement(this.updateSql(changed));
      if (this.updates.size < MAX_UPDATE_SHAPES) this.updates.set(shape, statement);
    }
    return {
      statement,
      values: [this.persistent(entity, this.key), ...changed.map((column) => this.persistent(entity, column))],
    };
  }

  /** Each column's persistent value in a form `!==` compares by content (dates by instant, arrays and JSON by text). */
  private comparable(entity: Entity): unknown[] {
    return this.columns.map((column) => {
      const value = this.persistent(entity, column);
      if (value instanceof Date) return value.getTime();
      return typeof value === 'object' && value !== null ? JSON.stringify(value) : value;
    });
  }

  private persistent(entity: Entity, column: ColumnMetadata): unknown {
    const value = (entity as Record<string, unknown>)[column.propertyName];
    return value === undefined ? null : this.dataSource.driver.preparePersistentValue(value, column);
  }
}
