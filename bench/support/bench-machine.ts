import { cpus, loadavg } from 'node:os';

/** The load average as a bench starts, said aloud when other work running beside it will make the figures noisy. */
export function loadAverageAtStart(log: (line: string) => void): number {
  const load = loadavg()[0] ?? 0;
  if (load >= 3) log(`load average ${load.toFixed(1)}: other work is running, figures will be noisy`);
  return load;
}

/** What a bench's JSON report says of the machine it ran on. */
export function machineReport(loadAtStart: number): {
  cpus: number;
  node: string;
  loadAverageAtStart: number;
  loadAverageAtEnd: number | undefined;
} {
  return {
    cpus: cpus().length,
    node: process.version,
    loadAverageAtStart: loadAtStart,
    loadAverageAtEnd: loadavg()[0],
  };
}
