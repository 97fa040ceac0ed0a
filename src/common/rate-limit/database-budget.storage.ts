import { Logger } from '@nestjs/common';
import { within } from '../../../libs/time/within';
import { defineStatement } from '../../database/sql/sql-statement';
import { sql, type SqlFragment } from '../../database/sql/sql-fragment';
import type { SqlTarget } from '../../database/sql/sql-target';
import type { LiveInstanceCount } from '../../database/instances/instance-registry';
import { rateLimitStoreMetrics } from './rate-limit-metrics';
import { describeError } from '../logging/loggable-error';
import { FixedWindowThrottlerStorage, type CountedHit, type CountingStorage } from './fixed-window.storage';
import { reservationBlock } from './reservation-rule';

/**
 * Grants up to `want` units of a budget in the database's current window (see
 * reservation-rule.ts for the rule and its bound): one upsert, under the
 * row's lock. The window starts on the database clock at a multiple of its
 * length since the epoch, which for 60 seconds is `date_trunc('minute', now())`;
 * a row of an older window starts over.
 */
interface GrantRow {
  granted: number;
  used: number;
  window_start_ms: number;
  now_ms: number;
}

const RESERVE = defineStatement<
  { key: string; want: number; limit: number; instances: number; windowSeconds: number },
  GrantRow
>(
  (p) => {
    // The rule of grantFor, in SQL: min(want, max(1, left / (2·instances)), left), never below 0.
    const grant = (left: SqlFragment): SqlFragment =>
      sql`GREATEST(0, LEAST(${p.want}::int, GREATEST(1, (${left}) / (2 * ${p.instances}::int)), ${left}))`;
    const limit = sql`${p.limit}::int`;
    const leftInRow = sql`${p.limit}::int - c.used`;
    return sql`
      INSERT INTO rate_limit_counter AS c (key, window_start, used, last_grant)
      SELECT ${p.key}, w.start, ${grant(limit)}, ${grant(limit)}
        FROM (SELECT to_timestamp((floor(extract(epoch FROM now()) / ${p.windowSeconds}::int)
                                   * ${p.windowSeconds}::int)::float8) AS start) w
      ON CONFLICT (key) DO UPDATE SET
        window_start = EXCLUDED.window_start,
        used = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.used + ${grant(leftInRow)} ELSE EXCLUDED.used END,
        last_grant = CASE WHEN c.window_start = EXCLUDED.window_start THEN ${grant(leftInRow)} ELSE EXCLUDED.last_grant END
      RETURNING c.last_grant AS granted, c.used,
                (extract(epoch FROM c.window_start) * 1000)::float8 AS window_start_ms,
                (extract(epoch FROM now()) * 1000)::float8 AS now_ms`;
  },
  { prepared: true },
);

/**
 * Adds what an instance served on its own while the counter was out of reach
 * to the shared rows, in the window it was served in: a window that spans an
 * outage then serves at most the limit in all, not the limit plus each
 * instance's share. Counts of a window the database has left are dropped.
 */
const CHARGE = defineStatement<{ keys: string[]; units: number[]; windowStartMs: number; windowSeconds: number }>(
  (p) => sql`
    INSERT INTO rate_limit_counter AS c (key, window_start, used, last_grant)
    SELECT o.key, to_timestamp(w.start::float8), o.units, 0
      FROM unnest(${p.keys}::text[], ${p.units}::int[]) AS o(key, units),
           (SELECT floor(extract(epoch FROM now()) / ${p.windowSeconds}::int) * ${p.windowSeconds}::int AS start) w
     WHERE w.start * 1000 = ${p.windowStartMs}::float8
    ON CONFLICT (key) DO UPDATE SET
      window_start = EXCLUDED.window_start,
      used = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.used + EXCLUDED.used ELSE EXCLUDED.used END`,
  { prepared: false },
);

/** A reservation slower than this counts as an unreachable counter (a request must not hang on it). */
export const RESERVE_TIMEOUT_MS = 1_000;
/** While falling back, how often a request tries the shared counter again. */
export const FALLBACK_RETRY_MS = 2_000;

/** This instance's units of one budget in one window (of the database clock). */
interface Reservation {
  windowEndMs: number;
  /** Granted and not yet served. */
  held: number;
  /** The window's units granted to all instances, as of this instance's last grant. */
  usedAtGrant: number;
  /** The last grant was 0: the budget is used up until the window ends. */
  exhausted: boolean;
  /** The last grant was all that was asked for (far from the limit): the next block may be asked for ahead. */
  whole: boolean;
}

/** What one budget served here alone in one window, and how much of it the shared row already holds. */
interface ServedAlone {
  windowStartMs: number;
  served: number;
  /** A try can charge and then fail to reserve: the next charges only the rest. */
  charged: number;
}

interface Fallback {
  local: FixedWindowThrottlerStorage;
  lastTryMs: number;
  servedAlone: Map<string, ServedAlone>;
}

/**
 * Account budgets shared by every instance on the database
 * (RATE_LIMIT_STORE=database), counted in the UNLOGGED `rate_limit_counter`.
 * An instance reserves units in blocks (reservation-rule.ts) and serves
 * requests from its block in the same turn (no promise). Far from the limit it
 * asks for the rest of a block when a quarter is left, in the background, so
 * a steady stream of requests never waits on the database; near the limit,
 * a request that finds the block empty awaits one upsert, and concurrent ones
 * wait on the same reservation. `X-RateLimit-Reset`
 * and `Retry-After` come from the database's window end, with this
 * instance's clock only measuring the time since the database last answered
 * (its offset to the database clock is taken at every reservation), so
 * instances with skewed clocks agree on where a window ends.
 *
 * When the counter cannot be reached (an error, or no answer within
 * RESERVE_TIMEOUT_MS), the instance counts locally, in windows of the
 * database clock as last seen, allowing
 * `floor(left / live instances)` (at least 1 while any is left; never
 * unlimited), `left` being what the window had left at its last grant (the
 * limit in a window it had no grant in), says so once in the log and in
 * `rate_limit_store_fallbacks_total`, tries the counter again every
 * FALLBACK_RETRY_MS, and says once when it is back. What it served alone
 * is then added to the shared rows of that window before it reserves again
 * (CHARGE), so the rest of the window serves no more than the limit in all.
 * A window that spans an outage can serve more than the limit by what was
 * granted to the others after an instance's last grant (a block or so when
 * requests are spread over the instances), and by the share of an instance
 * that had no grant in it: neither can know what the others served.
 */
export class DatabaseBudgetStorage implements CountingStorage {
  private readonly logger = new Logger('AccountRateLimit');
  private readonly reservations = new Map<string, Reservation>();
  /** Reservations on their way, by key: a request that finds its block empty waits for the one in flight. */
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private offsetMs = 0;
  private fallback: Fallback | null = null;
  private lastSweepEndMs = 0;

  constructor(
    private readonly database: SqlTarget,
    private readonly instances: LiveInstanceCount,
    windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(windowSeconds) || windowSeconds <= 0 || 3600 % windowSeconds !== 0) {
      throw new Error(`a shared rate-limit window must divide an hour; ${windowSeconds} seconds does not`);
    }
  }

  /** The database clock, as estimated from this instance's clock and the offset seen at the last reservation. */
  databaseNow(): number {
    return this.now() + this.offsetMs;
  }

  increment(key: string, ttl: number, limit: number): Promise<CountedHit> {
    return Promise.resolve(this.incrementNow(key, ttl, limit));
  }

  incrementNow(key: string, ttl: number, limit: number): CountedHit | Promise<CountedHit> {
    if (this.fallback !== null && this.now() - this.fallback.lastTryMs < FALLBACK_RETRY_MS) {
      return this.countLocally(this.fallback, key, ttl, limit);
    }
    const now = this.databaseNow();
    const reservation = this.reservations.get(key);
    if (reservation !== undefined && now < reservation.windowEndMs) {
      if (reservation.held > 0) {
        reservation.held -= 1;
        const block = reservationBlock(limit);
        if (reservation.whole && reservation.held > 0 && reservation.held <= block / 4 && !this.inFlight.has(key)) {
          void this.track(key, this.askAhead(key, ttl, limit, block - reservation.held));
        }
        return this.hit(reservation, limit, false, now);
      }
      if (reservation.exhausted) return this.hit(reservation, limit, true, now);
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending.then(() => this.incrementNow(key, ttl, limit));
    return this.track(key, this.reserve(key, ttl, limit));
  }

  private track<T>(key: string, reserving: Promise<T>): Promise<T> {
    const tracked = reserving.finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, tracked);
    return tracked;
  }

  /** One upsert granting up to `want` units, or the fallback when the counter is out of reach. */
  private async grant(key: string, ttl: number, limit: number, want: number): Promise<GrantRow | Fallback> {
    const sentAt = this.now();
    let row: GrantRow | null;
    try {
      if (this.fallback !== null) await this.chargeServedAlone(this.fallback, ttl);
      row = await within(
        RESERVE.one(
          { key, want, limit, instances: this.instances.liveApiInstances(), windowSeconds: ttl / 1000 },
          this.database,
        ),
        RESERVE_TIMEOUT_MS,
        'the rate-limit counter',
      );
      if (row === null) throw new Error('the rate-limit upsert returned no row');
    } catch (error) {
      return this.fallBack(error);
    }
    this.recovered();
    const receivedAt = this.now();
    // The database read its clock about halfway through the round trip.
    this.offsetMs = row.now_ms - (sentAt + receivedAt) / 2;
    this.sweep(row.window_start_ms + ttl);
    return row;
  }

  /** What this instance served alone since the counter went out of reach, added to the shared rows before it reserves again. */
  private async chargeServedAlone(fallback: Fallback, ttl: number): Promise<void> {
    const windowStartMs = Math.floor(this.databaseNow() / ttl) * ttl;
    const owed = [...fallback.servedAlone].filter(
      ([, alone]) => alone.windowStartMs === windowStartMs && alone.served > alone.charged,
    );
    if (owed.length === 0) return;
    await within(
      CHARGE.affected(
        {
          keys: owed.map(([key]) => key),
          units: owed.map(([, alone]) => alone.served - alone.charged),
          windowStartMs,
          windowSeconds: ttl / 1000,
        },
        this.database,
      ),
      RESERVE_TIMEOUT_MS,
      'the rate-limit counter',
    );
    for (const [, alone] of owed) alone.charged = alone.served;
  }

  /** A request found its block empty: a new block, from which it takes one unit. */
  private async reserve(key: string, ttl: number, limit: number): Promise<CountedHit> {
    const want = reservationBlock(limit);
    const row = await this.grant(key, ttl, limit, want);
    if ('local' in row) return this.countLocally(row, key, ttl, limit);
    const reservation: Reservation = {
      windowEndMs: row.window_start_ms + ttl,
      held: row.granted,
      usedAtGrant: row.used,
      exhausted: row.granted === 0,
      whole: row.granted === want,
    };
    this.reservations.set(key, reservation);
    if (reservation.exhausted) return this.hit(reservation, limit, true, row.now_ms);
    reservation.held -= 1;
    return this.hit(reservation, limit, false, row.now_ms);
  }

  /**
   * The rest of a block, asked for while a quarter of it is left: added to
   * what the instance holds in the same window (it never holds more than a
   * block), or a fresh block when the database has moved on to a new window.
   */
  private async askAhead(key: string, ttl: number, limit: number, want: number): Promise<void> {
    const row = await this.grant(key, ttl, limit, want);
    // Out of reach: the requests that follow find the fallback.
    if ('local' in row) return;
    const windowEndMs = row.window_start_ms + ttl;
    const reservation = this.reservations.get(key);
    if (reservation !== undefined && reservation.windowEndMs === windowEndMs) {
      reservation.held += row.granted;
      reservation.usedAtGrant = row.used;
      reservation.whole = row.granted === want;
      reservation.exhausted = row.granted === 0;
    } else {
      this.reservations.set(key, {
        windowEndMs,
        held: row.granted,
        usedAtGrant: row.used,
        exhausted: row.granted === 0,
        whole: false,
      });
    }
  }

  private hit(reservation: Reservation, limit: number, blocked: boolean, now: number): CountedHit {
    const remaining = Math.max(0, limit - reservation.usedAtGrant + reservation.held);
    const secondsLeft = Math.max(1, Math.ceil((reservation.windowEndMs - now) / 1000));
    return {
      totalHits: blocked ? limit + 1 : limit - remaining,
      timeToExpire: secondsLeft,
      isBlocked: blocked,
      timeToBlockExpire: secondsLeft,
      resetAtSeconds: Math.round(reservation.windowEndMs / 1000),
    };
  }

  /** This instance's share of the budget, counted here alone while the shared counter is out of reach. */
  private countLocally(fallback: Fallback, key: string, ttl: number, limit: number): CountedHit {
    const share = this.fallbackShare(key, limit);
    const counted = fallback.local.incrementNow(key, ttl, share);
    const remaining = Math.max(0, share - counted.totalHits);
    const windowStartMs = Math.floor(this.databaseNow() / ttl) * ttl;
    const windowEndMs = windowStartMs + ttl;
    if (!counted.isBlocked) {
      const alone = fallback.servedAlone.get(key);
      if (alone?.windowStartMs === windowStartMs) alone.served += 1;
      else fallback.servedAlone.set(key, { windowStartMs, served: 1, charged: 0 });
    }
    return {
      ...counted,
      totalHits: limit - remaining,
      resetAtSeconds: Math.round(windowEndMs / 1000),
      localShare: share,
    };
  }

  /**
   * What this instance may serve of a budget alone in the current window: its
   * share (`floor(left / N)`, at least 1 while any is left) of what the
   * window had left when it last reached the counter. A window it reserved
   * nothing in counts as untouched (`left` is the limit). The instances that
   * served an account before the outage then share the rest of its window,
   * not a whole limit more. The units it still holds are not in it: they are
   * counted in the shared row already, and served from the reservation when
   * a request next tries the counter.
   */
  private fallbackShare(key: string, limit: number): number {
    const reservation = this.reservations.get(key);
    const known = reservation !== undefined && this.databaseNow() < reservation.windowEndMs;
    const left = known ? Math.max(0, limit - reservation.usedAtGrant) : limit;
    return left === 0 ? 0 : Math.max(1, Math.floor(left / this.instances.liveApiInstances()));
  }

  private fallBack(error: unknown): Fallback {
    if (this.fallback !== null) {
      this.fallback.lastTryMs = this.now();
      return this.fallback;
    }
    this.logger.warn(
      `the shared rate-limit counter is unreachable; counting this instance's share of each budget locally until it is back (${describeError(error)})`,
    );
    rateLimitStoreMetrics.fallbacks.inc();
    rateLimitStoreMetrics.fallback.set(1);
    this.fallback = {
      local: new FixedWindowThrottlerStorage(() => this.databaseNow()),
      lastTryMs: this.now(),
      servedAlone: new Map(),
    };
    return this.fallback;
  }

  private recovered(): void {
    if (this.fallback === null) return;
    this.fallback = null;
    rateLimitStoreMetrics.fallback.set(0);
    this.logger.log('the shared rate-limit counter is reachable again; budgets are shared again');
  }

  /** Forgets reservations of past windows, at most once per window. */
  private sweep(windowEndMs: number): void {
    if (windowEndMs === this.lastSweepEndMs) return;
    this.lastSweepEndMs = windowEndMs;
    for (const [key, reservation] of this.reservations) {
      if (reservation.windowEndMs < windowEndMs) this.reservations.delete(key);
    }
  }
}
