import autocannon from 'autocannon';
import { PeakRss, postgresCpuTicks, processCpuTicks, ticksToMicros } from './proc-usage';

/** One request of a load: built afresh for every request, so ids and keys can vary. */
export interface LoadRequest {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface RunFigures {
  /** Successful (2xx) responses per second. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the server process (user + system) per successful request; of all of them when several serve. */
  serverCpuMicros: number;
  /** CPU of all of PostgreSQL (postmaster and every child) per successful request. */
  postgresCpuMicros: number;
  /** The largest of the server processes' peaks. */
  peakRssMiB: number;
  requests: number;
  /** Non-2xx answers plus connection errors and timeouts; a run with failures is not a valid figure. */
  failures: number;
}

const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Drives `next()` requests at `connections` connections for `durationSeconds`
 * against one server process, or several behind a proxy (autocannon, as a
 * library, in this process), and reads their CPU and PostgreSQL's from /proc
 * around the run.
 */
export async function measuredRun(options: {
  url: string;
  serverPid: number;
  /** More processes serving the same load (instances behind a load balancer at `url`), counted with the server. */
  otherServerPids?: number[];
  postmasterPid: number;
  connections: number;
  durationSeconds: number;
  authorization: string;
  next: () => LoadRequest;
}): Promise<RunFigures> {
  const serverPids = [options.serverPid, ...(options.otherServerPids ?? [])];
  const serverCpu = (): number => serverPids.reduce((sum, pid) => sum + processCpuTicks(pid), 0);
  const serverBefore = serverCpu();
  const postgresBefore = postgresCpuTicks(options.postmasterPid);
  const rss = serverPids.map((pid) => new PeakRss(pid));
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    headers: { authorization: options.authorization },
    requests: [
      {
        method: 'GET',
        path: '/',
        setupRequest: (request) => {
          const next = options.next();
          const headers = { ...request.headers, ...next.headers };
          if (next.body !== undefined) headers['content-type'] = 'application/json';
          return { ...request, method: next.method, path: next.path, body: next.body, headers };
        },
      },
    ],
  });
  const peakRssMiB = Math.max(...rss.map((peak) => peak.stop()));
  const serverTicks = serverCpu() - serverBefore;
  const postgresTicks = postgresCpuTicks(options.postmasterPid) - postgresBefore;
  const ok = result['2xx'];
  const perRequest = (ticks: number): number => (ok === 0 ? 0 : round(ticksToMicros(ticks) / ok, 0));
  return {
    requestsPerSecond: round(ok / result.duration, 0),
    p50Ms: round(result.latency.p50, 2),
    p99Ms: round(result.latency.p99, 2),
    serverCpuMicros: perRequest(serverTicks),
    postgresCpuMicros: perRequest(postgresTicks),
    peakRssMiB: round(peakRssMiB),
    requests: ok,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
