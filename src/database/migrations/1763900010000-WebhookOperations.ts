import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook operations (internal-api.md "Webhook operations"): skipped
 * deliveries, resend and recovery, secret rotation, health and warnings,
 * trace context, bounded history.
 */
export class WebhookOperations1763900010000 implements MigrationInterface {
  name = 'WebhookOperations1763900010000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // previous_secret_*: the secret a rotation replaced, still signing until
    // it expires (at most two secrets sign at a time). disabled_at: where
    // `enable` with recovery starts. alert_open: a failing or disabled warning
    // was raised and no success has followed yet (the next one "recovers").
    await queryRunner.query(`
      ALTER TABLE webhook_subscription
        ADD COLUMN previous_secret_sealed text,
        ADD COLUMN previous_secret_expires_at timestamptz(3),
        ADD COLUMN disabled_at timestamptz(3),
        ADD COLUMN last_success_at timestamptz(3),
        ADD COLUMN last_failure_at timestamptz(3),
        ADD COLUMN alert_open boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `UPDATE webhook_subscription SET disabled_at = updated_at WHERE NOT enabled AND deleted_at IS NULL`,
    );

    // `skipped`: an event a disabled subscription would have received, kept
    // (no attempt) so that recovery can send it later. trace_id: the trace of
    // the request that caused the delivery. retry_from: attempts made before
    // the current schedule began (a recovered delivery gets a fresh one).
    // replay: queued by recovery; a subscription with one pending is sent one
    // at a time, oldest first, so replayed events arrive in order.
    await queryRunner.query(`ALTER TABLE webhook_delivery DROP CONSTRAINT webhook_delivery_status_check`);
    await queryRunner.query(`
      ALTER TABLE webhook_delivery
        ADD CONSTRAINT webhook_delivery_status_check
          CHECK (status IN ('pending', 'succeeded', 'failed', 'dropped', 'skipped')),
        ADD COLUMN trace_id text,
        ADD COLUMN retry_from integer NOT NULL DEFAULT 0,
        ADD COLUMN replay boolean NOT NULL DEFAULT false`);
    // The claim asks, for every due subscription, whether a replayed delivery is
    // pending: a probe into this (nearly always empty) index, not a walk over
    // the subscription's whole backlog.
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_replay_idx ON webhook_delivery (subscription_id) WHERE status = 'pending' AND replay`,
    );
    // The retention purge: final deliveries, oldest completion first.
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_completed_idx ON webhook_delivery (completed_at) WHERE status <> 'pending'`,
    );

    await queryRunner.query(`
      ALTER TABLE webhook_delivery_attempt
        ADD COLUMN triggered_by text NOT NULL DEFAULT 'scheduled' CHECK (triggered_by IN ('scheduled', 'manual'))`);

    await queryRunner.query(`
      CREATE TABLE webhook_warning (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        subscription_id text COLLATE "C" NOT NULL REFERENCES webhook_subscription (id) ON DELETE CASCADE,
        at timestamptz(3) NOT NULL,
        kind text NOT NULL CHECK (kind IN ('failing', 'disabled', 'recovered')),
        consecutive_failures integer NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX webhook_warning_subscription_idx ON webhook_warning (subscription_id, id)`);
    await queryRunner.query(`CREATE INDEX webhook_warning_at_idx ON webhook_warning (at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_warning`);
    await queryRunner.query(`ALTER TABLE webhook_delivery_attempt DROP COLUMN triggered_by`);
    await queryRunner.query(`DROP INDEX webhook_delivery_completed_idx`);
    await queryRunner.query(`DROP INDEX webhook_delivery_replay_idx`);
    await queryRunner.query(`DELETE FROM webhook_delivery WHERE status = 'skipped'`);
    await queryRunner.query(`
      ALTER TABLE webhook_delivery
        DROP CONSTRAINT webhook_delivery_status_check,
        DROP COLUMN trace_id,
        DROP COLUMN retry_from,
        DROP COLUMN replay`);
    await queryRunner.query(`
      ALTER TABLE webhook_delivery ADD CONSTRAINT webhook_delivery_status_check
        CHECK (status IN ('pending', 'succeeded', 'failed', 'dropped'))`);
    await queryRunner.query(`
      ALTER TABLE webhook_subscription
        DROP COLUMN previous_secret_sealed,
        DROP COLUMN previous_secret_expires_at,
        DROP COLUMN disabled_at,
        DROP COLUMN last_success_at,
        DROP COLUMN last_failure_at,
        DROP COLUMN alert_open`);
  }
}
