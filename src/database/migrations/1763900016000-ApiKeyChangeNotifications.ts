import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change that can make a key stop authenticating or change what it may
 * do (revocation, new scopes, principal or prefix, deletion, TRUNCATE) sends
 * `pg_notify('api_key_changed', key_hash)` from a trigger, so it happens in
 * the changing transaction whatever the path (internal API, dashboard, CLI,
 * plain SQL): delivered on commit, never on rollback. Instances evict their
 * cached lookup on it (src/identity/api-key-revocations.listener.ts). The
 * batched last-used update changes none of these columns and stays silent.
 */
export class ApiKeyChangeNotifications1763900016000 implements MigrationInterface {
  name = 'ApiKeyChangeNotifications1763900016000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION api_key_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('api_key_changed', '*');
        ELSE
          PERFORM pg_notify('api_key_changed', OLD.key_hash);
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER api_key_changed_update AFTER UPDATE ON api_key FOR EACH ROW
        WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
           OR OLD.scopes IS DISTINCT FROM NEW.scopes
           OR OLD.principal_type IS DISTINCT FROM NEW.principal_type
           OR OLD.principal_id IS DISTINCT FROM NEW.principal_id
           OR OLD.key_prefix IS DISTINCT FROM NEW.key_prefix
           OR OLD.key_hash IS DISTINCT FROM NEW.key_hash)
        EXECUTE FUNCTION api_key_notify_change()`);
    await queryRunner.query(
      `CREATE TRIGGER api_key_changed_delete AFTER DELETE ON api_key FOR EACH ROW EXECUTE FUNCTION api_key_notify_change()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER api_key_changed_truncate AFTER TRUNCATE ON api_key FOR EACH STATEMENT EXECUTE FUNCTION api_key_notify_change()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER api_key_changed_truncate ON api_key`);
    await queryRunner.query(`DROP TRIGGER api_key_changed_delete ON api_key`);
    await queryRunner.query(`DROP TRIGGER api_key_changed_update ON api_key`);
    await queryRunner.query(`DROP FUNCTION api_key_notify_change()`);
  }
}
