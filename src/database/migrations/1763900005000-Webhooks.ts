import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1763900005000 implements MigrationInterface {
  name = 'Webhooks1763900005000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Soft-deleted (deleted_at) so that an attempt already in flight can still
    // record its outcome against the row, and so deliveries keep their owner.
    // `secret_sealed` holds the AES-256-GCM sealed secret (or, with no key
    // configured, the plaintext `whsec_...`).
    await queryRunner.query(`
      CREATE TABLE webhook_subscription (
        id text COLLATE "C" PRIMARY KEY,
        principal_type text NOT NULL CHECK (principal_type IN ('organiser', 'venue')),
        principal_id text COLLATE "C" NOT NULL,
        url text NOT NULL,
        events text[] NOT NULL,
        secret_sealed text NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        description text,
        last_status text,
        consecutive_failures integer NOT NULL DEFAULT 0,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at timestamptz(3)
      )`);
    // The account's list and count (limit of ten), and the outbox's recipient lookup.
    await queryRunner.query(
      `CREATE INDEX webhook_subscription_account_idx ON webhook_subscription (principal_type, principal_id, created_at, id)
         WHERE deleted_at IS NULL`,
    );

    // `payload` is the envelope serialised once, in the transaction that made
    // the fact true: every attempt sends and signs exactly these bytes.
    // `seq` orders a subscription's deliveries exactly ("the oldest" of the
    // one-probe rule), where created_at can tie within a millisecond.
    await queryRunner.query(`
      CREATE TABLE webhook_delivery (
        id text COLLATE "C" PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        subscription_id text COLLATE "C" NOT NULL REFERENCES webhook_subscription (id) ON DELETE CASCADE,
        event_type text NOT NULL,
        subject_id text COLLATE "C" NOT NULL,
        payload bytea NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'dropped')),
        attempts integer NOT NULL DEFAULT 0,
        last_status text,
        next_attempt_at timestamptz(3),
        lease_expires_at timestamptz(3),
        lease_token text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        completed_at timestamptz(3)
      )`);
    // A fact reaches a subscription once, even if a publisher ever emitted it twice.
    await queryRunner.query(
      `CREATE UNIQUE INDEX webhook_delivery_fact_key ON webhook_delivery (subscription_id, event_type, subject_id)`,
    );
    // The worker's claim: due pending deliveries, soonest first.
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_due_idx ON webhook_delivery (next_attempt_at) WHERE status = 'pending'`,
    );
    // Per subscription: the oldest pending delivery (probe rule) and the attempts in flight (cap of four).
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_pending_idx ON webhook_delivery (subscription_id, seq) WHERE status = 'pending'`,
    );
    // Per subscription, newest first: the internal deliveries list.
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_subscription_idx ON webhook_delivery (subscription_id, seq)`,
    );

    await queryRunner.query(`
      CREATE TABLE webhook_delivery_attempt (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        delivery_id text COLLATE "C" NOT NULL REFERENCES webhook_delivery (id) ON DELETE CASCADE,
        attempted_at timestamptz(3) NOT NULL,
        outcome text NOT NULL,
        duration_ms integer NOT NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_attempt_delivery_idx ON webhook_delivery_attempt (delivery_id, id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_delivery_attempt`);
    await queryRunner.query(`DROP TABLE webhook_delivery`);
    await queryRunner.query(`DROP TABLE webhook_subscription`);
  }
}
