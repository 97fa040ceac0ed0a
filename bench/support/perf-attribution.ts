import { createInterface } from 'node:readline';
import { runWhenExecuted } from './bench-environment';

/**
 * CPU per request by where the code lives, from Linux `perf` samples of a
 * server run with `--perf-basic-prof` (so JIT frames have names):
 *
 *   NODE_OPTIONS=--perf-basic-prof … (start the load)
 *   perf record -g -e cpu-clock -F 1999 -p <pid> -o perf.data -- sleep 5
 *   perf script -i perf.data -F tid,ip,sym | node dist/bench/support/perf-attribution.js <main tid> <requests in those 5 s> [package|file|function]
 *
 * Each sample of the main thread is charged to the innermost JavaScript
 * frame on its stack, so V8 builtins, native code and the kernel work a
 * call causes count with the code that called them (kernel samples are
 * marked `K`); samples inside a garbage collection are `(GC)`, samples of
 * other threads (GC helpers, the compiler) `(helper threads)`. Unlike
 * `--cpu-prof`, which samples wall time, this counts CPU only: time spent
 * preempted inside a socket write is not charged to the write.
 */
export type Grouping = 'package' | 'file' | 'function';

export interface Sample {
  tid: string;
  /** Innermost first: [address, symbol]. */
  frames: Array<[string, string]>;
}

const GC_FRAME = /Scavenge|Heap::CollectGarbage|MarkCompact|Heap::PerformGarbageCollection/;

function placeOf(symbol: string, grouping: Grouping): string {
  const name = symbol.replace(/^JS:[*~^]?/, '');
  if (grouping === 'function') return name.replace(/file:\/\//, '').replace(/\S*\/node_modules\//, '');
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(name);
  if (inModules?.[1] !== undefined) return inModules[1];
  const own = /\/dist\/(src|libs|bench)\/(\S+?):/.exec(name);
  if (own?.[1] !== undefined) return grouping === 'file' ? `${own[1]}/${own[2] ?? ''}` : own[1];
  const builtin = /(node:\S+?):/.exec(name);
  if (builtin?.[1] !== undefined) return grouping === 'file' ? builtin[1] : 'node';
  return name;
}

/** Where one sample is charged (see the module comment). */
export function chargeOf(sample: Sample, mainTid: string, grouping: Grouping): string {
  if (sample.tid !== mainTid) return '(helper threads)';
  if (sample.frames.some(([, symbol]) => GC_FRAME.test(symbol))) return '(GC)';
  const [leafAddress = ''] = sample.frames[0] ?? [];
  const kernel = leafAddress.startsWith('ffff');
  const js = sample.frames.find(([, symbol]) => symbol.startsWith('JS:'));
  const place = js === undefined ? `(native: ${sample.frames[0]?.[1] ?? '?'})` : placeOf(js[1], grouping);
  return kernel ? `K ${place}` : place;
}

/**
 * Parses `perf script -F tid,ip,sym` output: a header line per sample, then
 * one frame per line, indented by a tab. A header may itself start with
 * spaces (perf pads the tid when the command name is not printed).
 */
export function* samplesOf(lines: Iterable<string>): Generator<Sample> {
  let current: Sample | null = null;
  for (const line of lines) {
    if (line.trim() === '') {
      if (current !== null && current.frames.length > 0) yield current;
      current = null;
    } else if (!line.startsWith('\t')) {
      if (current !== null && current.frames.length > 0) yield current;
      current = { tid: line.trim().split(/\s+/).pop() ?? '', frames: [] };
    } else if (current !== null) {
      const [address = '', ...symbol] = line.trim().split(/\s+/);
      current.frames.push([address, symbol.join(' ')]);
    }
  }
  if (current !== null && current.frames.length > 0) yield current;
}

async function main(): Promise<void> {
  const [mainTid, requestsText, grouping = 'package', frequencyText = '1999'] = process.argv.slice(2);
  const requests = Number(requestsText);
  if (mainTid === undefined || !(requests > 0) || !['package', 'file', 'function'].includes(grouping)) {
    throw new Error(
      'usage: perf script -F tid,ip,sym | node perf-attribution.js <main tid> <requests> [package|file|function] [Hz]',
    );
  }
  const lines: string[] = [];
  for await (const line of createInterface({ input: process.stdin })) lines.push(line);
  const charged = new Map<string, number>();
  let total = 0;
  for (const sample of samplesOf(lines)) {
    total += 1;
    const place = chargeOf(sample, mainTid, grouping as Grouping);
    charged.set(place, (charged.get(place) ?? 0) + 1);
  }
  const microsPerSample = 1e6 / Number(frequencyText);
  const perRequest = (count: number): string => ((count * microsPerSample) / requests).toFixed(1).padStart(7);
  process.stdout.write(`${total} samples: ${perRequest(total)} µs CPU per request\n`);
  for (const [place, count] of [...charged].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    process.stdout.write(`${perRequest(count)} µs  ${((100 * count) / total).toFixed(1).padStart(5)}%  ${place}\n`);
  }
}

runWhenExecuted(module, main);
