import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MigrationInterface } from 'typeorm';
import { migrationName } from './schema-migrations';

class Named1700000000000 implements MigrationInterface {
  name = 'Named1700000000000';
  async up(): Promise<void> {}
  async down(): Promise<void> {}
}

/** As `typeorm migration:create` writes one: no `name`. */
class Unnamed1700000000001 implements MigrationInterface {
  async up(): Promise<void> {}
  async down(): Promise<void> {}
}

describe('migrationName (the name TypeORM records, and readiness compares)', () => {
  it('is the migration’s name, or its class name when it declares none', () => {
    assert.equal(migrationName(new Named1700000000000()), 'Named1700000000000');
    assert.equal(migrationName(new Unnamed1700000000001()), 'Unnamed1700000000001');
  });
});
