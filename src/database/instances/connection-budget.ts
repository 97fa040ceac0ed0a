import type { AppConfig } from '../../config/app-config';
import type { ConnectionFigures } from './instance-statements';

/**
 * Connections an instance opens outside its pool: the one dedicated client
 * of the notification hub (src/database/notifications/notification-hub.ts),
 * which LISTENs for every channel (key changes, delivery wake-ups, session ends).
 */
export const DEDICATED_CONNECTIONS = 1;

/**
 * This instance's connections outside its pool: the notification hub's,
 * and on the embedded default the server's keeper (embedded-keeper.ts).
 */
export function dedicatedConnections(config: Pick<AppConfig, 'keepsEmbeddedServer'>): number {
  return DEDICATED_CONNECTIONS + (config.keepsEmbeddedServer ? 1 : 0);
}

/**
 * After how long a start refused beside instances that missed a heartbeat
 * (7.5 s after their last) may start: by then those that were killed count
 * as gone (15 s after their last).
 */
export const REPLACEMENT_RETRY_SECONDS = 10;

/**
 * A start refused by the connection budget: DB_POOL_MAX (or the server's
 * max_connections) is a setting to change, so the process exits as a
 * refused setting does, with exit code 2.
 */
export class ConnectionBudgetRefusal extends Error {
  override readonly name = 'ConnectionBudgetRefusal';
}

export interface OwnConnections {
  poolMax: number;
  dedicated: number;
}

/**
 * Why this instance would not fit the server's connections, or null when it
 * fits. What the live instances may open (their pools at full size and their
 * dedicated connections) plus this instance's must stay within
 * `max_connections` less the connections the server keeps for superusers and
 * reserved roles: past that, a busy moment turns into "too many clients"
 * refusals on some instance, which is worse than refusing to start now.
 */
export function connectionBudgetProblem(figures: ConnectionFigures, own: OwnConnections): string | null {
  const reserved = figures.superuser_reserved + figures.reserved;
  const available = figures.max_connections - reserved;
  const needed = figures.other_connections + own.poolMax + own.dedicated;
  if (needed <= available) return null;
  return (
    `DB_POOL_MAX=${own.poolMax} does not fit the database server: the live instances would need ${needed} connections ` +
    `(${figures.other_instances} other instance(s) with ${figures.other_connections}, plus this instance's pool of ` +
    `${own.poolMax} and its ${own.dedicated} dedicated connection${own.dedicated === 1 ? '' : 's'}), but the server allows ${available} ` +
    `(max_connections ${figures.max_connections} less ${reserved} reserved). Lower DB_POOL_MAX or raise max_connections.` +
    (lateInstancesDecide(figures, own)
      ? ` ${figures.late_instances} of the other instances (${figures.late_connections} connections) missed a heartbeat: ` +
        `if this instance replaces one stopped without a SIGTERM, start it again in ${REPLACEMENT_RETRY_SECONDS} s, ` +
        'when the stopped ones count as gone.'
      : '')
  );
}

/**
 * Whether instances that missed a heartbeat (perhaps killed, not yet gone) are in the sum and it would fit
 * without them: only then may starting again later help. A refusal among instances that all heartbeat says
 * nothing of the kind, since a wait changes nothing there.
 */
function lateInstancesDecide(figures: ConnectionFigures, own: OwnConnections): boolean {
  if (figures.late_instances === 0) return false;
  const withoutLate = {
    ...figures,
    other_instances: figures.other_instances - figures.late_instances,
    other_connections: figures.other_connections - figures.late_connections,
    late_instances: 0,
    late_connections: 0,
  };
  return connectionBudgetProblem(withoutLate, own) === null;
}
