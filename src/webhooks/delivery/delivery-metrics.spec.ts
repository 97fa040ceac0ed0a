import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { DELIVERY_OUTCOMES } from './delivery-metrics';

describe('webhook_deliveries_total', () => {
  it('starts at 0 for every outcome before the first attempt, so every rate has a baseline', () => {
    // The registry is the process's; a process of its own shows what a service exposes before its first attempt.
    const script = `
      const { metricsRegistry } = require(${JSON.stringify(require.resolve('../../common/metrics/metrics-registry'))});
      require(${JSON.stringify(require.resolve('./delivery-metrics'))});
      metricsRegistry.getSingleMetricAsString('webhook_deliveries_total').then((text) => process.stdout.write(text));
    `;
    const text = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    const samples = new Map(
      [...text.matchAll(/^webhook_deliveries_total\{outcome="([a-z0-9_]+)"\} (\S+)$/gm)].map(([, outcome, value]) => [
        outcome,
        value,
      ]),
    );
    assert.deepEqual([...samples.keys()].sort(), [...DELIVERY_OUTCOMES].sort(), text);
    for (const [outcome, value] of samples) assert.equal(value, '0', outcome);
  });
});
