import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { preparedStatement, type PreparedStatement } from './prepared-statement';

/**
 * The whole-row statements of one entity, built once from TypeORM's own
 * metadata (column names, types, transformers), for the writes on a hot
 * path: TypeORM's `findOne`/`save`/`insert` build their SQL anew on every
 * call and `save` reads the row again before writing it. Values go through
 * the driver's own conversions (`preparePersistentValue` writes jsonb as
 * JSON text, `prepareHydratedValue` reads it back), so a row written or read
 * here is the row TypeORM would have written or read.
 */
export class EntityStatements<Entity extends ObjectLiteral> {
  /** `INSERT INTO <table> (<every column>) VALUES ($1, …)`. */
  readonly insert: PreparedStatement;
  /** `UPDATE <table> SET <every column but the key> = … WHERE <key> = $1`. */
  readonly update: PreparedStatement;
  /** `SELECT <every column> FROM <table>`, to which a caller appends its own conditions. */
  readonly selectAll: string;
  private readonly columns: ColumnMetadata[];
  private readonly key: ColumnMetadata;
  private readonly create: () => Entity;

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
    const rest = this.columns.filter((column) => column !== key);
    this.update = preparedStatement(
      `UPDATE ${table} SET ${rest.map((column, i) => `${name(column)} = $${i + 2}`).join(', ')} WHERE ${name(key)} = $1`,
    );
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

  /** The values of `update`: the key first, then every other column. */
  updateValues(entity: Entity): unknown[] {
    return [
      this.persistent(entity, this.key),
      ...this.columns.filter((column) => column !== this.key).map((column) => this.persistent(entity, column)),
    ];
  }

  private persistent(entity: Entity, column: ColumnMetadata): unknown {
    const value = (entity as Record<string, unknown>)[column.propertyName];
    return value === undefined ? null : this.dataSource.driver.preparePersistentValue(value, column);
  }
}
