import { Logger } from '@nestjs/common';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows copied per statement (each its own short transaction). */
const BATCH = 10_000;
/** Days of partitions made ahead of today; the retention job keeps at least this many ready. */
const DAYS_AHEAD = 7;
/** Empty rows written and removed once so the queue's file starts with this many rows' pages (see ballast). */
const BALLAST_ROWS = 20_000;

/**
 * The queue apart from the history.
 *
 * - `webhook_delivery` is the queue: only deliveries that are not final
 *   (pending, leased or waiting for a retry). A lease writes only
 *   `lease_token` and `lease_expires_at`, which no index holds, and the
 *   table leaves over half of each page free (fillfactor 45), so a lease is a
 *   HOT update: a new row version on the same page, no index entry. Over half,
 *   because a claim leases the oldest deliveries, which sit together: with
 *   an envelope of about 430 bytes, every row of a page can be leased at
 *   once and each still finds room for its new version. The
 *   claim's index is on (subscription_id, seq), which never changes while a
 *   delivery waits.
 * - `webhook_delivery_history` holds final deliveries (succeeded, failed,
 *   dropped, skipped), partitioned by the UTC day of `completed_at`. The
 *   statement that records a final attempt deletes the delivery from the
 *   queue and inserts it into its day, in one statement; a resend or a
 *   recovery moves it back the same way.
 * - `webhook_delivery_attempt` is partitioned by the UTC day of
 *   `attempted_at`, with no foreign key (its check was the largest item of a
 *   recording batch; attempts are only ever written beside their delivery).
 *
 * There is no DEFAULT partition: a day without its partition refuses the
 * write (the statement fails whole, so the delivery stays in the queue under
 * its lease and nothing is lost), and `DETACH PARTITION ... CONCURRENTLY`,
 * which PostgreSQL refuses while a default partition exists, lets retention
 * take a day away without blocking anyone. `webhook_history_ensure_partitions`
 * makes the days' partitions (as plain tables, then attached: ATTACH takes
 * SHARE UPDATE EXCLUSIVE on the parent, which never waits for nor blocks the
 * deliveries' reads and writes, where CREATE TABLE ... PARTITION OF would
 * take ACCESS EXCLUSIVE).
 *
 * Conversion: the old tables are renamed aside and the new ones made in one
 * short transaction; the rows are then copied over in batches of 10,000,
 * each its own transaction (pending ones first, so the queue is whole at
 * once), with progress logged; the old tables are dropped last. Interrupted,
 * it resumes where the copy stopped. It runs outside the migrations'
 * transaction for that reason (`transaction = false`).
 */
export class DeliveryQueueAndHistory1763900024000 implements MigrationInterface {
  name = 'DeliveryQueueAndHistory1763900024000';
  transaction = false;

  private readonly logger = new Logger('DeliveryQueueAndHistory');

  async up(queryRunner: QueryRunner): Promise<void> {
    const [state] = (await queryRunner.query(
      `SELECT to_regclass('webhook_delivery_history') IS NOT NULL AS made,
              to_regclass('webhook_delivery_unsplit') IS NOT NULL AS aside`,
    )) as Array<{ made: boolean; aside: boolean }>;
    if (state?.made !== true) {
      await queryRunner.startTransaction();
      try {
        await this.setAside(queryRunner);
        await this.createTables(queryRunner);
        await queryRunner.commitTransaction();
      } catch (error) {
        await queryRunner.rollbackTransaction();
        throw error;
      }
      await this.ballast(queryRunner);
    } else if (state.aside !== true) {
      return; // already converted
    }
    await this.copyAll(queryRunner);
    await queryRunner.query(`DROP TABLE webhook_delivery_attempt_unsplit`);
    await queryRunner.query(`DROP TABLE webhook_delivery_unsplit`);
  }

  /** The old tables, renamed with their indexes and constraints out of the new names' way. */
  private async setAside(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL lock_timeout = '10s'`);
    await queryRunner.query(`ALTER TABLE webhook_delivery_attempt RENAME TO webhook_delivery_attempt_unsplit`);
    await queryRunner.query(`ALTER TABLE webhook_delivery RENAME TO webhook_delivery_unsplit`);
    await queryRunner.query(
      `ALTER TABLE webhook_delivery_attempt_unsplit DROP CONSTRAINT webhook_delivery_attempt_delivery_id_fkey`,
    );
    // Only the primary keys are read by the copy; the other indexes would clash with the new names.
    for (const index of [
      'webhook_delivery_fact_key',
      'webhook_delivery_pending_idx',
      'webhook_delivery_subscription_idx',
      'webhook_delivery_replay_idx',
      'webhook_delivery_completed_idx',
      'webhook_delivery_leased_idx',
      'webhook_delivery_due_idx',
      'webhook_delivery_attempt_delivery_idx',
    ]) {
      await queryRunner.query(`DROP INDEX IF EXISTS ${index}`);
    }
    await queryRunner.query(
      `ALTER TABLE webhook_delivery_unsplit RENAME CONSTRAINT webhook_delivery_pkey TO webhook_delivery_unsplit_pkey`,
    );
    await queryRunner.query(
      `ALTER TABLE webhook_delivery_unsplit RENAME CONSTRAINT webhook_delivery_status_check
         TO webhook_delivery_unsplit_status_check`,
    );
    await queryRunner.query(
      `ALTER TABLE webhook_delivery_attempt_unsplit
         RENAME CONSTRAINT webhook_delivery_attempt_pkey TO webhook_delivery_attempt_unsplit_pkey`,
    );
  }

  private async createTables(queryRunner: QueryRunner): Promise<void> {
    // One numbering for queue and history: a delivery keeps its place (the delivery log's order) as it moves.
    await queryRunner.query(`CREATE SEQUENCE webhook_delivery_seq`);
    await queryRunner.query(`
      CREATE TABLE webhook_delivery (
        id text COLLATE "C" PRIMARY KEY,
        seq bigint NOT NULL DEFAULT nextval('webhook_delivery_seq'),
        subscription_id text COLLATE "C" NOT NULL REFERENCES webhook_subscription (id) ON DELETE CASCADE,
        event_type text NOT NULL,
        subject_id text COLLATE "C" NOT NULL,
        payload bytea NOT NULL,
        status text NOT NULL DEFAULT 'pending' CONSTRAINT webhook_delivery_status_check CHECK (status = 'pending'),
        attempts integer NOT NULL DEFAULT 0,
        last_status text,
        next_attempt_at timestamptz(3),
        lease_expires_at timestamptz(3),
        lease_token text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        trace_id text,
        retry_from integer NOT NULL DEFAULT 0,
        replay boolean NOT NULL DEFAULT false
      ) WITH (fillfactor = 45, vacuum_truncate = false)`);
    // The claim's index, in queue order. Its predicate is always true here; it keeps the plans' and
    // the claim-cost test's view of it (every pending delivery) as it was.
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_pending_idx ON webhook_delivery (subscription_id, seq) WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_replay_idx ON webhook_delivery (subscription_id) WHERE status = 'pending' AND replay`,
    );
    // A fact is queued once: the outbox's insert skips a fact already waiting (ON CONFLICT). Only the
    // queue is checked; why a fact never reaches the outbox twice is in docs/webhooks.md.
    await queryRunner.query(
      `CREATE UNIQUE INDEX webhook_delivery_fact_key ON webhook_delivery (subscription_id, event_type, subject_id)`,
    );

    // The claims' turns: one row per subscription with something queued, least recently looked at first
    // (see CLAIM_SUBSCRIPTIONS in delivery-queue.repository.ts).
    await queryRunner.query(`
      CREATE TABLE webhook_delivery_turn (
        subscription_id text COLLATE "C" PRIMARY KEY REFERENCES webhook_subscription (id) ON DELETE CASCADE,
        turn_at timestamptz NOT NULL DEFAULT now(),
        idle boolean NOT NULL DEFAULT false,
        -- The deliveries the subscription's claims leased (some may have ended since): where a claim
        -- counts what is in flight, exactly, without an index on the lease columns.
        in_flight text[] COLLATE "C" NOT NULL DEFAULT '{}',
        -- No delivery of the subscription waiting in the queue is before this position: claims walk its
        -- queue from here, past none of the deliveries finished before it (see CLAIM_DELIVERIES).
        from_seq bigint NOT NULL DEFAULT 0
      ) WITH (fillfactor = 50)`);
    // No index on turn_at: each claim moves its turns, and an unindexed turn_at keeps that a HOT update.
    // The claim reads the whole table (a row per subscription with work, a few pages) and sorts it.
    await queryRunner.query(QUEUED_TURN_FUNCTION);
    await queryRunner.query(`
      CREATE TRIGGER webhook_delivery_turn_queued AFTER INSERT ON webhook_delivery
        REFERENCING NEW TABLE AS queued FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_turn_queued()`);

    await queryRunner.query(`
      CREATE TABLE webhook_delivery_history (
        id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL DEFAULT nextval('webhook_delivery_seq'),
        subscription_id text COLLATE "C" NOT NULL,
        event_type text NOT NULL,
        subject_id text COLLATE "C" NOT NULL,
        payload bytea NOT NULL,
        status text NOT NULL CONSTRAINT webhook_delivery_history_status_check
          CHECK (status IN ('succeeded', 'failed', 'dropped', 'skipped')),
        attempts integer NOT NULL DEFAULT 0,
        last_status text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        completed_at timestamptz(3) NOT NULL DEFAULT now(),
        trace_id text,
        retry_from integer NOT NULL DEFAULT 0
      ) PARTITION BY RANGE (completed_at)`);
    // The delivery log (newest first per subscription) and a resend's look-up by id.
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_history_subscription_idx ON webhook_delivery_history (subscription_id, seq)`,
    );
    await queryRunner.query(`CREATE INDEX webhook_delivery_history_id_idx ON webhook_delivery_history (id)`);

    await queryRunner.query(`CREATE SEQUENCE webhook_delivery_attempt_seq`);
    // No primary key: it would have to include attempted_at; nothing looks an attempt up by id alone.
    await queryRunner.query(`
      CREATE TABLE webhook_delivery_attempt (
        id bigint NOT NULL DEFAULT nextval('webhook_delivery_attempt_seq'),
        delivery_id text COLLATE "C" NOT NULL,
        attempted_at timestamptz(3) NOT NULL,
        outcome text NOT NULL,
        duration_ms integer NOT NULL,
        triggered_by text NOT NULL DEFAULT 'scheduled'
          CONSTRAINT webhook_delivery_attempt_triggered_by_check CHECK (triggered_by IN ('scheduled', 'manual')),
        http_status smallint CONSTRAINT webhook_delivery_attempt_http_status_check CHECK (http_status BETWEEN 100 AND 999),
        response_excerpt text
          CONSTRAINT webhook_delivery_attempt_response_excerpt_check CHECK (octet_length(response_excerpt) <= 4096)
      ) PARTITION BY RANGE (attempted_at)`);
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_attempt_delivery_idx ON webhook_delivery_attempt (delivery_id, id)`,
    );

    // Every delivery, queued or final, as one relation: for operators' queries (the service reads each table).
    await queryRunner.query(`
      CREATE VIEW webhook_delivery_all AS
      SELECT id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status,
             next_attempt_at, lease_expires_at, lease_token, created_at, NULL::timestamptz(3) AS completed_at,
             trace_id, retry_from, replay
        FROM webhook_delivery
      UNION ALL
      SELECT id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status,
             NULL, NULL, NULL, created_at, completed_at, trace_id, retry_from, false
        FROM webhook_delivery_history`);

    await queryRunner.query(ENSURE_PARTITIONS_FUNCTION);

    // The days the history being converted has rows in, then today and the days ahead.
    await queryRunner.query(
      `SELECT webhook_history_ensure_partitions(day, day)
         FROM (SELECT (coalesce(completed_at, created_at) AT TIME ZONE 'UTC')::date AS day
                 FROM webhook_delivery_unsplit WHERE status <> 'pending'
               UNION
               SELECT (attempted_at AT TIME ZONE 'UTC')::date FROM webhook_delivery_attempt_unsplit) AS days
        ORDER BY day`,
    );
    await queryRunner.query(
      `SELECT webhook_history_ensure_partitions((now() AT TIME ZONE 'UTC')::date,
                                                (now() AT TIME ZONE 'UTC')::date + ${DAYS_AHEAD})`,
    );
    await queryRunner.query(
      `SELECT setval('webhook_delivery_seq', max(seq)) FROM webhook_delivery_unsplit HAVING max(seq) IS NOT NULL`,
    );
    await queryRunner.query(
      `SELECT setval('webhook_delivery_attempt_seq', max(id)) FROM webhook_delivery_attempt_unsplit
       HAVING max(id) IS NOT NULL`,
    );
  }

  /**
   * The queue's file is grown once to a few hundred empty pages, which its
   * vacuums keep (vacuum_truncate off). The planner prices a sequential
   * scan by the file's pages: a queue that is almost empty when a plan is
   * made (a generic plan the worker's prepared claim keeps, or statistics
   * taken between bursts) would otherwise be read row by row for each
   * subscription once a backlog builds up. The single table had its history
   * as that weight; the queue alone has none.
   */
  private async ballast(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `INSERT INTO webhook_subscription (id, principal_type, principal_id, url, events, secret_sealed)
       VALUES ('whk_queue_ballast', 'organiser', 'org_queue_ballast', 'https://invalid.invalid/', '{}', '')`,
    );
    await queryRunner.query(
      `INSERT INTO webhook_delivery (id, seq, subscription_id, event_type, subject_id, payload, trace_id)
       SELECT 'ballast_' || n, 0, 'whk_queue_ballast', 'ballast', 'ballast_' || n, '\\x', repeat('0', 32)
         FROM generate_series(1, ${BALLAST_ROWS}) AS n`,
    );
    // The cascade deletes the rows; the pages stay, empty, for the queue's next rows.
    await queryRunner.query(`DELETE FROM webhook_subscription WHERE id = 'whk_queue_ballast'`);
    await queryRunner.query(`VACUUM webhook_delivery`);
  }

  /** Pending deliveries first (the queue is whole after the first batches), then history, then attempts. */
  private async copyAll(queryRunner: QueryRunner): Promise<void> {
    const [total] = (await queryRunner.query(
      `SELECT (SELECT count(*)::int FROM webhook_delivery_unsplit) AS deliveries,
              (SELECT count(*)::int FROM webhook_delivery_attempt_unsplit) AS attempts`,
    )) as Array<{ deliveries: number; attempts: number }>;
    if (total === undefined || total.deliveries + total.attempts === 0) return;
    this.logger.log(
      `splitting webhook deliveries into queue and day partitions: ${total.deliveries} deliveries, ` +
        `${total.attempts} attempts`,
    );
    const queueColumns = `id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status,
      next_attempt_at, lease_expires_at, lease_token, created_at, trace_id, retry_from, replay`;
    const historyColumns = `id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status,
      created_at, completed_at, trace_id, retry_from`;
    let copied = 0;
    for (const pending of [true, false]) {
      const [target, columns, values] = pending
        ? ['webhook_delivery', queueColumns, queueColumns]
        : [
            'webhook_delivery_history',
            historyColumns,
            historyColumns.replace('completed_at', 'coalesce(completed_at, created_at)'),
          ];
      let after = '';
      for (;;) {
        // Keyset over the old primary key; the NOT EXISTS skips what an interrupted run already copied.
        const rows = (await queryRunner.query(
          `WITH batch AS (
             SELECT * FROM webhook_delivery_unsplit
              WHERE id > $1 AND (status = 'pending') = $2 ORDER BY id LIMIT ${BATCH}
           ), copied AS (
             INSERT INTO ${target} (${columns})
             SELECT ${values} FROM batch
              WHERE NOT EXISTS (SELECT 1 FROM ${target} d WHERE d.id = batch.id)
           )
           SELECT max(id) AS last, count(*)::int AS n FROM batch`,
          [after, pending],
        )) as Array<{ last: string | null; n: number }>;
        const batch = rows[0];
        if (batch === undefined || batch.n === 0 || batch.last === null) break;
        after = batch.last;
        copied += batch.n;
        this.logger.log(`webhook deliveries copied: ${copied} of ${total.deliveries}`);
      }
    }
    let attempts = 0;
    let afterId = '0';
    for (;;) {
      const rows = (await queryRunner.query(
        `WITH batch AS (
           SELECT id, delivery_id, attempted_at, outcome, duration_ms, triggered_by, http_status, response_excerpt
             FROM webhook_delivery_attempt_unsplit WHERE id > $1::bigint ORDER BY id LIMIT ${BATCH}
         ), copied AS (
           INSERT INTO webhook_delivery_attempt
                  (id, delivery_id, attempted_at, outcome, duration_ms, triggered_by, http_status, response_excerpt)
           SELECT * FROM batch
            WHERE NOT EXISTS (SELECT 1 FROM webhook_delivery_attempt a
                               WHERE a.delivery_id = batch.delivery_id AND a.id = batch.id)
         )
         SELECT max(id)::text AS last, count(*)::int AS n FROM batch`,
        [afterId],
      )) as Array<{ last: string | null; n: number }>;
      const batch = rows[0];
      if (batch === undefined || batch.n === 0 || batch.last === null) break;
      afterId = batch.last;
      attempts += batch.n;
      this.logger.log(`webhook delivery attempts copied: ${attempts} of ${total.attempts}`);
    }
    this.logger.log(`webhook deliveries split: ${copied} deliveries, ${attempts} attempts`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP VIEW webhook_delivery_all`);
    await queryRunner.query(`DROP TABLE webhook_delivery_turn`);
    await queryRunner.query(`DROP TRIGGER webhook_delivery_turn_queued ON webhook_delivery`);
    await queryRunner.query(`DROP FUNCTION webhook_delivery_turn_queued()`);
    await queryRunner.query(`ALTER TABLE webhook_delivery RENAME TO webhook_delivery_queue`);
    await queryRunner.query(`ALTER TABLE webhook_delivery_attempt RENAME TO webhook_delivery_attempt_partitioned`);
    await queryRunner.query(
      `ALTER TABLE webhook_delivery_queue RENAME CONSTRAINT webhook_delivery_pkey TO webhook_delivery_queue_pkey`,
    );
    await queryRunner.query(`ALTER TABLE webhook_delivery_queue DROP CONSTRAINT webhook_delivery_status_check`);
    for (const index of [
      'webhook_delivery_pending_idx',
      'webhook_delivery_replay_idx',
      'webhook_delivery_fact_key',
      'webhook_delivery_history_subscription_idx',
      'webhook_delivery_history_id_idx',
      'webhook_delivery_attempt_delivery_idx',
    ]) {
      await queryRunner.query(`DROP INDEX ${index}`);
    }
    await queryRunner.query(`
      CREATE TABLE webhook_delivery (
        id text COLLATE "C" PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        subscription_id text COLLATE "C" NOT NULL REFERENCES webhook_subscription (id) ON DELETE CASCADE,
        event_type text NOT NULL,
        subject_id text COLLATE "C" NOT NULL,
        payload bytea NOT NULL,
        status text NOT NULL DEFAULT 'pending' CONSTRAINT webhook_delivery_status_check
          CHECK (status IN ('pending', 'succeeded', 'failed', 'dropped', 'skipped')),
        attempts integer NOT NULL DEFAULT 0,
        last_status text,
        next_attempt_at timestamptz(3),
        lease_expires_at timestamptz(3),
        lease_token text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        completed_at timestamptz(3),
        trace_id text,
        retry_from integer NOT NULL DEFAULT 0,
        replay boolean NOT NULL DEFAULT false
      )`);
    await queryRunner.query(`
      INSERT INTO webhook_delivery (id, seq, subscription_id, event_type, subject_id, payload, status, attempts,
                                    last_status, next_attempt_at, lease_expires_at, lease_token, created_at,
                                    trace_id, retry_from, replay)
      OVERRIDING SYSTEM VALUE
      SELECT id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status,
             next_attempt_at, lease_expires_at, lease_token, created_at, trace_id, retry_from, replay
        FROM webhook_delivery_queue`);
    await queryRunner.query(`
      INSERT INTO webhook_delivery (id, seq, subscription_id, event_type, subject_id, payload, status, attempts,
                                    last_status, created_at, completed_at, trace_id, retry_from)
      OVERRIDING SYSTEM VALUE
      SELECT h.id, h.seq, h.subscription_id, h.event_type, h.subject_id, h.payload, h.status, h.attempts,
             h.last_status, h.created_at, h.completed_at, h.trace_id, h.retry_from
        FROM webhook_delivery_history h
       WHERE EXISTS (SELECT 1 FROM webhook_subscription s WHERE s.id = h.subscription_id)`);
    await queryRunner.query(identityAfterCopiedRows('webhook_delivery', 'seq'));
    await queryRunner.query(
      `CREATE UNIQUE INDEX webhook_delivery_fact_key ON webhook_delivery (subscription_id, event_type, subject_id)`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_pending_idx ON webhook_delivery (subscription_id, seq) WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_leased_idx ON webhook_delivery (subscription_id)
        WHERE status = 'pending' AND lease_expires_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_replay_idx ON webhook_delivery (subscription_id) WHERE status = 'pending' AND replay`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_subscription_idx ON webhook_delivery (subscription_id, seq)`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_completed_idx ON webhook_delivery (completed_at) WHERE status <> 'pending'`,
    );
    await queryRunner.query(`
      CREATE TABLE webhook_delivery_attempt (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        delivery_id text COLLATE "C" NOT NULL REFERENCES webhook_delivery (id) ON DELETE CASCADE,
        attempted_at timestamptz(3) NOT NULL,
        outcome text NOT NULL,
        duration_ms integer NOT NULL,
        triggered_by text NOT NULL DEFAULT 'scheduled' CHECK (triggered_by IN ('scheduled', 'manual')),
        http_status smallint CHECK (http_status BETWEEN 100 AND 999),
        response_excerpt text CHECK (octet_length(response_excerpt) <= 4096)
      )`);
    await queryRunner.query(`
      INSERT INTO webhook_delivery_attempt (id, delivery_id, attempted_at, outcome, duration_ms, triggered_by,
                                            http_status, response_excerpt)
      OVERRIDING SYSTEM VALUE
      SELECT a.id, a.delivery_id, a.attempted_at, a.outcome, a.duration_ms, a.triggered_by, a.http_status,
             a.response_excerpt
        FROM webhook_delivery_attempt_partitioned a
       WHERE EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.id = a.delivery_id)`);
    await queryRunner.query(identityAfterCopiedRows('webhook_delivery_attempt', 'id'));
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_attempt_delivery_idx ON webhook_delivery_attempt (delivery_id, id)`,
    );
    await queryRunner.query(`DROP TABLE webhook_delivery_attempt_partitioned`);
    await queryRunner.query(`DROP TABLE webhook_delivery_history`);
    await queryRunner.query(`DROP TABLE webhook_delivery_queue`);
    await queryRunner.query(`DROP SEQUENCE webhook_delivery_seq`);
    await queryRunner.query(`DROP SEQUENCE webhook_delivery_attempt_seq`);
    await queryRunner.query(`DROP FUNCTION webhook_history_ensure_partitions(date, date)`);
  }
}

/** Moves an identity column on past the rows copied in with OVERRIDING SYSTEM VALUE (the way back, down). */
function identityAfterCopiedRows(table: string, column: string): string {
  return `SELECT setval(pg_get_serial_sequence('${table}', '${column}'), max(${column})) FROM ${table}
          HAVING max(${column}) IS NOT NULL`;
}

/**
 * Every statement that queues deliveries gives their subscriptions a turn in
 * the claims (see CLAIM_SUBSCRIPTIONS in delivery-queue.repository.ts): a
 * new row for a subscription that had none, and a parked turn (nothing was
 * queued, or the subscription was off) brought back to now, and the turn's
 * position moved back to a delivery queued before it. A trigger, so that no
 * way of queueing (the outbox, a resend, a recovery, a script) can leave a
 * delivery without a turn, or behind its position. Turns already live are
 * only probed, never locked, so publishers to one subscription never wait on
 * each other here; rows are locked in subscription order, the order every
 * claim uses too.
 */
const QUEUED_TURN_FUNCTION = `
  CREATE FUNCTION webhook_delivery_turn_queued() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    -- Only the missing ones: an insert that meets an existing turn would wait for a claim moving it.
    INSERT INTO webhook_delivery_turn (subscription_id)
    SELECT DISTINCT q.subscription_id FROM queued q
     WHERE NOT EXISTS (SELECT 1 FROM webhook_delivery_turn t WHERE t.subscription_id = q.subscription_id)
     ORDER BY 1
    ON CONFLICT (subscription_id) DO NOTHING;
    -- A parked turn comes back. A delivery queued before its subscription's position (a resend or a
    -- recovery, which keep their place; or one whose number was drawn just before a claim moved the
    -- position, see CLAIM_DELIVERIES) moves the position back to it.
    IF EXISTS (SELECT 1 FROM webhook_delivery_turn t
                 JOIN (SELECT q.subscription_id, min(q.seq) AS seq FROM queued q GROUP BY 1) m
                   ON m.subscription_id = t.subscription_id
                WHERE t.idle OR t.from_seq > m.seq) THEN
      PERFORM 1 FROM webhook_delivery_turn t
                JOIN (SELECT q.subscription_id, min(q.seq) AS seq FROM queued q GROUP BY 1) m
                  ON m.subscription_id = t.subscription_id
        WHERE t.idle OR t.from_seq > m.seq
        ORDER BY t.subscription_id FOR UPDATE OF t;
      UPDATE webhook_delivery_turn t
         SET turn_at = CASE WHEN t.idle THEN now() ELSE t.turn_at END, idle = false,
             from_seq = least(t.from_seq, m.seq)
        FROM (SELECT q.subscription_id, min(q.seq) AS seq FROM queued q GROUP BY 1) m
       WHERE m.subscription_id = t.subscription_id AND (t.idle OR t.from_seq > m.seq);
    END IF;
    RETURN NULL;
  END
  $$`;

/**
 * Makes the missing day partitions of the history and the attempt log for
 * the UTC days [first_day, last_day], each as a table then attached (see
 * above; the parents' indexes are built on the empty table as it attaches),
 * and returns how many it made. A day whose lock is not granted within 2 s
 * (the function's own lock_timeout, whatever the caller's), or that another
 * transaction is making at the same moment, is skipped with a warning, for
 * the next call (they are made a week ahead).
 */
const ENSURE_PARTITIONS_FUNCTION = `
  CREATE FUNCTION webhook_history_ensure_partitions(first_day date, last_day date) RETURNS integer
  LANGUAGE plpgsql SET lock_timeout = '2s' AS $$
  DECLARE
    day date;
    parent text;
    name text;
    made integer := 0;
  BEGIN
    FOR day IN SELECT generate_series(first_day, last_day, interval '1 day')::date LOOP
      FOREACH parent IN ARRAY ARRAY['webhook_delivery_history', 'webhook_delivery_attempt'] LOOP
        name := parent || '_d' || to_char(day, 'YYYYMMDD');
        CONTINUE WHEN to_regclass(name) IS NOT NULL;
        BEGIN
          EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
          EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, name,
                         day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
          made := made + 1;
        EXCEPTION WHEN lock_not_available OR duplicate_table THEN
          RAISE WARNING 'webhook history partition % not made now: %', name, SQLERRM;
        END;
      END LOOP;
    END LOOP;
    RETURN made;
  END
  $$`;
