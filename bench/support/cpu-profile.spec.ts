import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { summariseProfile } from './cpu-profile';

const root = '/app';
/** The profiles this file writes, in one folder removed when it is done. */
const folder = mkdtempSync(join(tmpdir(), 'cpu-profile-'));
after(() => rmSync(folder, { recursive: true, force: true }));
const frame = (functionName: string, url = ''): { functionName: string; url: string; lineNumber: number } => ({
  functionName,
  url,
  lineNumber: 9,
});

/** Samples every 1,000 µs from t = 1,000,000 µs: two in `hot`, then one each in `warm`, idle, `hot`, `late`. */
function profileFile(): string {
  const file = join(mkdtempSync(join(folder, 'profile-')), 'p.cpuprofile');
  writeFileSync(
    file,
    JSON.stringify({
      nodes: [
        { id: 1, callFrame: frame('hot', 'file:///app/node_modules/typeorm/x.js') },
        { id: 2, callFrame: frame('warm', 'file:///app/dist/src/y.js') },
        { id: 3, callFrame: frame('(idle)') },
        { id: 4, callFrame: frame('late', 'node:internal/z') },
      ],
      startTime: 1_000_000,
      samples: [1, 1, 2, 3, 1, 4],
      timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000],
    }),
  );
  return file;
}

describe('summariseProfile', () => {
  it('counts self time only inside the load window, and shares of busy (non-idle) time', () => {
    const summary = summariseProfile(profileFile(), { fromMicros: 1_001_000, toMicros: 1_005_000 }, root);
    assert.equal(summary.idleMs, 1);
    assert.deepEqual(
      summary.top.map((entry) => [entry.function, entry.selfMs, entry.share]),
      [
        ['hot (node_modules/typeorm/x.js:10)', 3, 0.75],
        ['warm (dist/src/y.js:10)', 1, 0.25],
      ],
    );
  });

  it('names the caller of a native function outside Node itself', () => {
    const file = join(mkdtempSync(join(folder, 'profile-')), 'p.cpuprofile');
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [
          { id: 1, callFrame: frame('submit', 'file:///app/node_modules/pg/lib/query.js'), children: [2] },
          { id: 2, callFrame: frame('writevGeneric', 'node:internal/stream_base_commons'), children: [3] },
          { id: 3, callFrame: frame('writev') },
        ],
        startTime: 0,
        samples: [3],
        timeDeltas: [1000],
      }),
    );
    const summary = summariseProfile(file, { fromMicros: 0, toMicros: 10_000 }, root);
    assert.equal(summary.top[0]?.function, 'writev ← submit (node_modules/pg/lib/query.js:10)');
  });

  it('groups self time by package, own code and Node', () => {
    const summary = summariseProfile(profileFile(), { fromMicros: 0, toMicros: Number.MAX_SAFE_INTEGER }, root);
    assert.deepEqual(
      summary.byArea.map((area) => area.area),
      ['typeorm', 'src', 'node'],
    );
  });
});
