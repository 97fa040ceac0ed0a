import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` writes) that self time needs. */
interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTimeEntry {
  /** `function (file:line)`, the file relative to the project (or `node:` for Node's own). */
  function: string;
  selfMs: number;
  /** Share of the busy (non-idle) samples in the window. */
  share: number;
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  top: SelfTimeEntry[];
  /** Self time by where the code lives: a package under node_modules, src, libs, Node itself, or V8 (GC, native). */
  byArea: Array<{ area: string; selfMs: number; share: number }>;
}

function areaOf(frame: CpuProfile['nodes'][number]['callFrame']): string {
  const url = frame.url;
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return 'node';
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules !== null) return inModules[1] ?? url;
  const own = /\/dist\/(src|libs|bench)\//.exec(url);
  return own === null ? url : (own[1] ?? url);
}

function label(frame: CpuProfile['nodes'][number]['callFrame'], root: string): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  const file = frame.url.startsWith('file://') ? relative(root, frame.url.slice('file://'.length)) : frame.url;
  return `${name} (${file}:${frame.lineNumber + 1})`;
}

/**
 * Self time per function from a `.cpuprofile`, counting only samples taken
 * between `fromMicros` and `toMicros` (V8's profile clock is the monotonic
 * clock `process.hrtime` reads, so the load window of another process can
 * be cut out of it). Functions are merged by name, file and line.
 */
export function summariseProfile(
  file: string,
  window: { fromMicros: number; toMicros: number },
  root: string,
  top = 10,
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const labels = new Map(profile.nodes.map((node) => [node.id, label(node.callFrame, root)]));
  // A native function (writev, a hash...) alone says little: name the code outside Node that called it.
  const callers = new Map<number, CpuProfile['nodes'][number]>();
  for (const node of profile.nodes) for (const child of node.children ?? []) callers.set(child, node);
  for (const node of profile.nodes) {
    const { url, functionName } = node.callFrame;
    if (url !== '' || functionName.startsWith('(')) continue;
    let caller = callers.get(node.id);
    while (caller !== undefined && /^node:|^$/.test(caller.callFrame.url)) caller = callers.get(caller.id);
    if (caller !== undefined) labels.set(node.id, `${functionName} ← ${label(caller.callFrame, root)}`);
  }
  const areas = new Map(profile.nodes.map((node) => [node.id, areaOf(node.callFrame)]));
  const selfMicros = new Map<string, number>();
  const areaMicros = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < window.fromMicros || at > window.toMicros) continue;
    // Each sample stands for the time until the next one.
    const duration = profile.timeDeltas[i + 1] ?? delta;
    const name = labels.get(profile.samples[i] ?? -1) ?? '(unknown)';
    selfMicros.set(name, (selfMicros.get(name) ?? 0) + duration);
    const area = areas.get(profile.samples[i] ?? -1) ?? '(unknown)';
    areaMicros.set(area, (areaMicros.get(area) ?? 0) + duration);
  }
  areaMicros.delete('(idle)');
  const idle = selfMicros.get('(idle)') ?? 0;
  selfMicros.delete('(idle)');
  const busy = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);
  const entries = [...selfMicros.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  const share = (micros: number): number => (busy === 0 ? 0 : Math.round((micros / busy) * 1000) / 1000);
  return {
    busyMs: Math.round(busy / 1000),
    idleMs: Math.round(idle / 1000),
    top: entries.map(([name, micros]) => ({
      function: name,
      selfMs: Math.round(micros / 100) / 10,
      share: share(micros),
    })),
    byArea: [...areaMicros.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([area, micros]) => ({ area, selfMs: Math.round(micros / 100) / 10, share: share(micros) })),
  };
}
