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

/** A running server to stop: its pid, a way to signal it, and its exit. */
export interface StoppableServer {
  pid: number | undefined;
  signal(signal: NodeJS.Signals): void;
  exited: Promise<void>;
}

/** A server this process started: its child process, and the promise of its exit made when it was spawned. */
export function childServer(child: ChildProcess, exited: Promise<void>): StoppableServer {
  return {
    pid: child.pid,
    signal: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    exited,
  };
}

/** A server another process started (its pid from postmaster.pid): its exit is seen by polling (only at shutdown). */
export function serverByPid(pid: number, runs: (pid: number) => boolean): StoppableServer {
  return {
    pid,
    signal: (signal) => {
      if (runs(pid)) process.kill(pid, signal);
    },
    exited: new Promise((resolve) => {
      const poll = setInterval(() => {
        if (runs(pid)) return;
        clearInterval(poll);
        resolve();
      }, 50);
      poll.unref();
    }),
  };
}

/**
 * Stops a PostgreSQL server: a fast shutdown (SIGINT, as `pg_ctl stop`
 * sends), then, if it has not exited in `fastMs`, an immediate one (SIGQUIT:
 * no checkpoint, so the next start recovers from the write-ahead log;
 * nothing committed is lost), and past `immediateMs` it is left as it is,
 * with a warning. A server that answers no signal (stopped with SIGSTOP,
 * hung on a disk) must not keep the service from exiting; the next start on
 * its data folder finds it and takes it over. True when it exited.
 */
export async function stopServerProcess(
  server: StoppableServer,
  warn: (message: string) => void,
  times: ServerStopTimes = SERVER_STOP_TIMES,
): Promise<boolean> {
  server.signal('SIGINT');
  if (await waitUpTo(server.exited, times.fastMs)) return true;
  warn(
    `the embedded PostgreSQL server (pid ${server.pid}) has not stopped within ${times.fastMs} ms of its fast shutdown: asking for an immediate one`,
  );
  server.signal('SIGQUIT');
  if (await waitUpTo(server.exited, times.immediateMs)) return true;
  warn(
    `the embedded PostgreSQL server (pid ${server.pid}) answers no shutdown: left as it is (the next start on its data folder takes it over)`,
  );
  return false;
}
