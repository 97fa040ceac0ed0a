import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chargeOf, samplesOf } from './perf-attribution';

const PERF_SCRIPT = `node  100
\t         15147bf Builtins_KeyedLoadIC_Megamorphic
\t    7f680c2ecf04 JS:*_asJson /work/main/node_modules/pino/lib/tools.js:144:18
\t    7f680c3174d5 JS:* /work/main/dist/src/common/http/http-conventions.js:65:35

node  100
\tffffffff8b2a1c10 _raw_spin_unlock_irqrestore
\tffffffff8b2a1c99 do_syscall_64
\t    7f680c344b8f JS:*writevGeneric node:internal/stream_base_commons:123:22

node  100
\t          c494db v8::internal::ScavengerCollector::CollectGarbage
\t    7f680c2ecf04 JS:*parseRow /work/main/node_modules/pg/lib/result.js:63:11

node  101
\t          c494db v8::internal::Scavenger::ScavengeObject
`;

describe('perf attribution', () => {
  const samples = [...samplesOf(PERF_SCRIPT.split('\n'))];

  it('reads one sample per perf script block, innermost frame first', () => {
    assert.equal(samples.length, 4);
    assert.deepEqual(samples[0]?.frames[0], ['15147bf', 'Builtins_KeyedLoadIC_Megamorphic']);
    assert.equal(samples[3]?.tid, '101');
  });

  it('reads a header padded with spaces (perf script without the command name) as a new sample', () => {
    const padded = [...samplesOf([' 9282 ', '\t  153e901 Builtins_X', '', ' 9283 ', '\t  14ce0dc Builtins_Y'])];
    assert.deepEqual(
      padded.map((sample) => [sample.tid, sample.frames.length]),
      [
        ['9282', 1],
        ['9283', 1],
      ],
    );
  });

  it('charges a sample to the innermost JavaScript frame, by package, file or function', () => {
    const [builtin] = samples;
    assert.ok(builtin !== undefined);
    assert.equal(chargeOf(builtin, '100', 'package'), 'pino');
    assert.equal(chargeOf(builtin, '100', 'function'), '_asJson pino/lib/tools.js:144:18');
  });

  it('marks kernel samples, and charges them to the code that made the call', () => {
    assert.equal(chargeOf(samples[1]!, '100', 'file'), 'K node:internal/stream_base_commons');
  });

  it('counts garbage collection apart, and other threads apart', () => {
    assert.equal(chargeOf(samples[2]!, '100', 'package'), '(GC)');
    assert.equal(chargeOf(samples[3]!, '100', 'package'), '(helper threads)');
  });
});
