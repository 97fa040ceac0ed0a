import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * CPU time and memory of processes, read from Linux `/proc` (the only
 * platform the benchmarks measure on). CPU figures are in clock ticks of
 * `/proc/<pid>/stat`; `ticksToMicros` converts them.
 */

let ticksPerSecond: number | null = null;

/** `getconf CLK_TCK` (100 on every common Linux build). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

export function ticksToMicros(ticks: number): number {
  return (ticks * 1_000_000) / clockTicksPerSecond();
}

export interface ProcStat {
  ppid: number;
  /** utime + stime: CPU this process itself used. */
  ownTicks: number;
  /** cutime + cstime: CPU of its children that have exited and been waited for. */
  reapedChildrenTicks: number;
}

function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // gone between listing and reading
  }
  // The command name (field 2) may contain spaces and parentheses; fields after the last ')' are fixed.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
  return {
    ppid: Number(fields[1]),
    ownTicks: Number(fields[11]) + Number(fields[12]),
    reapedChildrenTicks: Number(fields[13]) + Number(fields[14]),
  };
}

/** CPU ticks (user + system) one process has used so far. */
export function processCpuTicks(pid: number): number {
  return readStat(pid)?.ownTicks ?? 0;
}

/**
 * CPU time (µs) one process has used so far, from `/proc/<pid>/schedstat`
 * (nanoseconds): fine enough to time a single statement, where clock ticks
 * (10 ms) are not.
 */
export function processCpuMicros(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
}

/** How the tree total reads processes: `/proc` by default, a fake in tests. */
export interface ProcReader {
  stat(pid: number): ProcStat | null;
  pids(): number[];
}

const procfs: ProcReader = {
  stat: readStat,
  pids: () =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number),
};

/**
 * CPU ticks of PostgreSQL as a whole: the postmaster, every live child
 * (backends, autovacuum, WAL writer, checkpointer...), and the children that
 * already exited (counted in the postmaster's cutime/cstime once reaped), so
 * a backend that ends between two readings is not lost. A child reaped while
 * the children are being read would be in neither sum (gone from the list,
 * not yet in the cutime read before): the reading is repeated until the
 * postmaster's reaped total did not move during it.
 */
export function postgresCpuTicks(postmasterPid: number, proc: ProcReader = procfs): number {
  for (let attempt = 1; ; attempt += 1) {
    const before = proc.stat(postmasterPid);
    if (before === null) return 0;
    let children = 0;
    for (const pid of proc.pids()) {
      const stat = proc.stat(pid);
      if (stat !== null && stat.ppid === postmasterPid) children += stat.ownTicks;
    }
    const after = proc.stat(postmasterPid);
    if (after === null) return 0;
    if (after.reapedChildrenTicks === before.reapedChildrenTicks || attempt >= 5) {
      return after.ownTicks + after.reapedChildrenTicks + children;
    }
  }
}

/** The parent of a process: the postmaster of a backend whose pid `pg_backend_pid()` gave. */
export function parentPid(pid: number): number {
  const stat = readStat(pid);
  if (stat === null) throw new Error(`process ${pid} is gone`);
  return stat.ppid;
}

function statusKiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

/**
 * Peak resident memory of a process during one run: `VmHWM`, reset at the
 * start (writing 5 to `clear_refs` resets it, Linux 4.0+), or, where the
 * reset is not allowed, the largest `VmRSS` sampled every 50 ms.
 */
export class PeakRss {
  private sampledKiB = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly highWaterMarkReset: boolean;

  constructor(private readonly pid: number) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      this.highWaterMarkReset = true;
    } catch {
      this.highWaterMarkReset = false;
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), 50);
  }

  /** Stops sampling; the peak in MiB since construction. */
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    const highWaterMark = this.highWaterMarkReset ? statusKiB(this.pid, 'VmHWM') : 0;
    return Math.max(this.sampledKiB, highWaterMark) / 1024;
  }

  private sample(): void {
    this.sampledKiB = Math.max(this.sampledKiB, statusKiB(this.pid, 'VmRSS'));
  }
}
