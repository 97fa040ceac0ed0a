import type { ChildProcess } from 'node:child_process';

export interface ServerStopTimes {
  /** How long a fast shutdown (SIGINT) may take before an immediate one is asked for. */
  fastMs: number;
  /** How long an immediate shutdown (SIGQUIT) may take before the server is left as it is. */
  immediateMs: number;
}

/** A fast shutdown writes a checkpoint, a second or two; these bounds are for a server that does not answer. */
export const SERVER_STOP_TIMES: ServerStopTimes = { fastMs: 10_000, immediateMs: 3_000 };

const waitUpTo = (exited: Promise<void>, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void exited.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });

/**
 * Stops a PostgreSQL server this process started: a fast shutdown (SIGINT,
 * as `pg_ctl stop` sends), then, if it has not exited in `fastMs`, an
 * immediate one (SIGQUIT: no checkpoint, so the next start recovers from the
 * write-ahead log; nothing committed is lost), and past `immediateMs` it is
 * left as it is, with a warning. A server that answers no signal (stopped
 * with SIGSTOP, hung on a disk) must not keep the service from exiting; the
 * next start on its data folder finds it and takes it over. True when it
 * exited.
 */
export async function stopServerProcess(
  child: ChildProcess,
  exited: Promise<void>,
  warn: (message: string) => void,
  times: ServerStopTimes = SERVER_STOP_TIMES,
): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  child.kill('SIGINT');
  if (await waitUpTo(exited, times.fastMs)) return true;
  warn(
    `the embedded PostgreSQL server (pid ${child.pid}) has not stopped within ${times.fastMs} ms of its fast shutdown: asking for an immediate one`,
  );
  child.kill('SIGQUIT');
  if (await waitUpTo(exited, times.immediateMs)) return true;
  warn(
    `the embedded PostgreSQL server (pid ${child.pid}) answers no shutdown: left as it is (the next start on its data folder takes it over)`,
  );
  return false;
}
