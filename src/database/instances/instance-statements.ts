import { defineStatement, type NoParams } from '../sql/sql-statement';
import { isoTimestamp } from '../sql/sql-columns';
import { sql } from '../sql/sql-fragment';

export interface InstanceRow {
  id: string;
  host: string;
  role: string;
  version: string;
  startedAt: string;
  lastSeenAt: string;
}

/**
 * Records the instance or refreshes its heartbeat (re-creating the row if it
 * was purged while this instance was paused), purges instances that are
 * gone, and counts the live ones, in one round trip. `started_at` is the
 * database's time of the first registration, kept across re-creations.
 */
export const HEARTBEAT = defineStatement<
  {
    id: string;
    host: string;
    pid: number;
    role: string;
    version: string;
    poolMax: number;
    dedicatedConnections: number;
    sealingKeyIds: string[];
    startedAt: string | null;
    goneAfterSeconds: number;
  },
  { started_at: string; live_others: number; live_api_others: number }
>(
  (p) => sql`
    WITH seen AS (
      INSERT INTO service_instance AS i
             (id, host, pid, role, version, pool_max, dedicated_connections, sealing_key_ids, started_at)
      VALUES (${p.id}, ${p.host}, ${p.pid}::int, ${p.role}, ${p.version}, ${p.poolMax}::int,
              ${p.dedicatedConnections}::int, ${p.sealingKeyIds}::text[],
              COALESCE(${p.startedAt}::timestamptz, now()))
      ON CONFLICT (id) DO UPDATE SET last_seen_at = now()
      RETURNING i.started_at
    ), purged AS (
      DELETE FROM service_instance
       WHERE id <> ${p.id} AND last_seen_at < now() - make_interval(secs => ${p.goneAfterSeconds}::float8)
    )
    SELECT (SELECT started_at::text FROM seen) AS started_at,
           (SELECT count(*)::int FROM service_instance
             WHERE id <> ${p.id} AND last_seen_at >= now() - make_interval(secs => ${p.goneAfterSeconds}::float8))
             AS live_others,
           (SELECT count(*)::int FROM service_instance
             WHERE id <> ${p.id} AND role IN ('all', 'api')
               AND last_seen_at >= now() - make_interval(secs => ${p.goneAfterSeconds}::float8))
             AS live_api_others`,
  { prepared: false },
);

export const DEREGISTER = defineStatement<{ id: string }>((p) => sql`DELETE FROM service_instance WHERE id = ${p.id}`, {
  prepared: false,
});

export const LIVE_INSTANCES = defineStatement<{ goneAfterSeconds: number }, InstanceRow>(
  (p) => sql`
    SELECT id, host, role, version,
           ${isoTimestamp('started_at')} AS "startedAt",
           ${isoTimestamp('last_seen_at')} AS "lastSeenAt"
      FROM service_instance
     WHERE last_seen_at >= now() - make_interval(secs => ${p.goneAfterSeconds}::float8)
     ORDER BY started_at, id`,
  { prepared: false },
);

/** The live instances with the sealing key ids each can open (null: a build that does not record them). */
export const LIVE_SEALING_KEYS = defineStatement<
  { goneAfterSeconds: number },
  { id: string; host: string; sealingKeyIds: string[] | null }
>(
  (p) => sql`
    SELECT id, host, sealing_key_ids AS "sealingKeyIds"
      FROM service_instance
     WHERE last_seen_at >= now() - make_interval(secs => ${p.goneAfterSeconds}::float8)
     ORDER BY started_at, id`,
  { prepared: false },
);

/** The other rows of one host that name their process, with its id. */
export const HOST_INSTANCES = defineStatement<{ id: string; host: string }, { id: string; pid: number }>(
  (p) => sql`SELECT id, pid FROM service_instance WHERE host = ${p.host} AND id <> ${p.id} AND pid IS NOT NULL`,
  { prepared: false },
);

export const FORGET_INSTANCES = defineStatement<{ ids: string[] }>(
  (p) => sql`DELETE FROM service_instance WHERE id = ANY(${p.ids}::text[])`,
  { prepared: false },
);

/** Serialises the connection check and the registration of starting instances, so two cannot both squeeze in. */
export const LOCK_REGISTRATIONS = defineStatement<NoParams>(
  () => sql`SELECT pg_advisory_xact_lock(hashtext('service_instance registration'))`,
  { prepared: false },
);

export interface ConnectionFigures {
  max_connections: number;
  superuser_reserved: number;
  reserved: number;
  other_instances: number;
  other_connections: number;
  /** Of the other instances, those that missed a heartbeat: stopped, perhaps, and about to be counted as gone. */
  late_instances: number;
  late_connections: number;
}

/**
 * The server's connection ceiling, what it keeps for superusers (and, from
 * PostgreSQL 16, for `pg_use_reserved_connections`), and what the other live
 * instances' pools and dedicated connections add up to.
 */
export const CONNECTION_FIGURES = defineStatement<
  { id: string; goneAfterSeconds: number; lateAfterSeconds: number },
  ConnectionFigures
>(
  (p) => sql`
    SELECT current_setting('max_connections')::int AS max_connections,
           current_setting('superuser_reserved_connections')::int AS superuser_reserved,
           COALESCE(current_setting('reserved_connections', true)::int, 0) AS reserved,
           count(i.id)::int AS other_instances,
           COALESCE(sum(i.pool_max + i.dedicated_connections), 0)::int AS other_connections,
           count(i.id) FILTER (WHERE i.late)::int AS late_instances,
           COALESCE(sum(i.pool_max + i.dedicated_connections) FILTER (WHERE i.late), 0)::int AS late_connections
      FROM (SELECT id, pool_max, dedicated_connections,
                   last_seen_at < now() - make_interval(secs => ${p.lateAfterSeconds}::float8) AS late
              FROM service_instance
             WHERE id <> ${p.id} AND last_seen_at >= now() - make_interval(secs => ${p.goneAfterSeconds}::float8)) i`,
  { prepared: false },
);
