import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { DELIVERY_OUTCOMES, deliveryOutcomeLabel } from './delivery-metrics';

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

  it('counts every attempt under one of its documented outcomes: a final status outside 200 to 599 is http_other', () => {
    assert.equal(deliveryOutcomeLabel(204), 'success');
    assert.equal(deliveryOutcomeLabel(302), 'http_3xx');
    assert.equal(deliveryOutcomeLabel(599), 'http_5xx');
    for (const status of [101, 600, 999]) assert.equal(deliveryOutcomeLabel(status), 'http_other', String(status));
    for (const outcome of [100, 200, 301, 404, 500, 600, 999, 'timeout', 'network_error', 'blocked_host'] as const) {
      assert.ok(DELIVERY_OUTCOMES.includes(deliveryOutcomeLabel(outcome)), String(outcome));
    }
  });
});
