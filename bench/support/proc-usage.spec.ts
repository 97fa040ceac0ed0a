import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { PeakRss, postgresCpuTicks, processCpuMicros, processCpuTicks, ticksToMicros } from './proc-usage';

/** Spins until this process has used `milliseconds` of CPU (not wall time: the machine may be busy). */
function burn(milliseconds: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= milliseconds * 1000) return;
  }
}

describe('proc-usage', () => {
  it('reads the CPU a process has used from /proc', () => {
    const before = processCpuTicks(process.pid);
    burn(300);
    assert.ok(ticksToMicros(processCpuTicks(process.pid) - before) >= 250_000);
  });

  it('reads a process’s CPU in microseconds, finer than clock ticks, growing with the work it does', () => {
    const before = processCpuMicros(process.pid);
    assert.ok(Number.isFinite(before) && before > 0, `${before}`);
    // Spin by CPU, not by wall time: on a busy machine 5 ms of wall time can be less than 3 ms of CPU.
    const deadline = Date.now() + 5_000;
    const usedSoFar = (): number => processCpuMicros(process.pid) - before;
    while (usedSoFar() < 5_000 && Date.now() < deadline) burn(1);
    const used = usedSoFar();
    assert.ok(used >= 5_000 && used < 1_000_000, `${used} µs`);
    // Half a clock tick or so: a tick counter could only say 0 or 10,000 µs.
    assert.notEqual(used % 10_000, 0, `${used} µs is a whole number of 10 ms ticks`);
  });

  it('counts the CPU of children that already exited in the tree total', () => {
    const before = postgresCpuTicks(process.pid);
    spawnSync(process.execPath, ['-e', `(${burn.toString()})(400)`]);
    assert.ok(ticksToMicros(postgresCpuTicks(process.pid) - before) >= 350_000);
  });

  it('reports the peak resident memory of a run', () => {
    const peak = new PeakRss(process.pid);
    const block = Buffer.alloc(96 * 1024 * 1024, 1);
    assert.ok(peak.stop() >= 96, 'the peak covers a 96 MiB block touched during the run');
    assert.equal(block[0], 1);
  });
});

describe('postgresCpuTicks', () => {
  it('counts a backend reaped while the children are read exactly once', () => {
    // The postmaster (1) has one backend (2, 30 ticks so far); the backend exits and is reaped mid-reading.
    let reaped = false;
    const proc = {
      pids: () => [1, 2],
      stat: (pid: number) => {
        if (pid === 1) return { ppid: 0, ownTicks: 5, reapedChildrenTicks: reaped ? 30 : 0 };
        // The backend exits and is reaped just as the children are read: gone from /proc, in cutime from now on.
        reaped = true;
        return null;
      },
    };
    assert.equal(postgresCpuTicks(1, proc), 35);
  });
});
