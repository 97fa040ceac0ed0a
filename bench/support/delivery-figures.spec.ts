import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flatness, histogramBuckets, histogramQuantile, latencySummary, metricValue } from './delivery-figures';

const scrape = (counts: [string, number][]): string =>
  [
    '# HELP webhook_claim_duration_seconds Claim time.',
    '# TYPE webhook_claim_duration_seconds histogram',
    ...counts.map(([le, count]) => `webhook_claim_duration_seconds_bucket{le="${le}"} ${count}`),
    `webhook_claim_duration_seconds_count ${counts[counts.length - 1]?.[1] ?? 0}`,
  ].join('\n');

describe('delivery-figures', () => {
  it('gives p50, p99 and the largest latency by nearest rank, whatever the order of the samples', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.deepEqual(latencySummary(values), { count: 100, p50: 50, p99: 99, max: 100 });
    assert.equal(latencySummary([]), null);
  });

  it('calls memory flat when the last sample is within 10% of the first, either way', () => {
    assert.equal(flatness([100, 140, 109.9])?.flat, true);
    assert.equal(flatness([100, 90.5])?.flat, true);
    assert.equal(flatness([100, 110.5])?.flat, false);
    assert.equal(flatness([100, 89])?.flat, false);
    assert.deepEqual(flatness([80, 88]), { firstMiB: 80, lastMiB: 88, change: 0.1, flat: true });
    assert.equal(flatness([]), null);
  });

  it('reads a gauge from the metrics text, summing its label sets, and null when it is absent', () => {
    const text = [
      '# TYPE webhook_pending_deliveries gauge',
      'webhook_pending_deliveries 1234',
      'webhook_pending_deliveries_other 9',
      'webhook_deliveries_total{outcome="succeeded"} 10',
      'webhook_deliveries_total{outcome="failed"} 2',
    ].join('\n');
    assert.equal(metricValue(text, 'webhook_pending_deliveries'), 1234);
    assert.equal(metricValue(text, 'webhook_deliveries_total'), 12);
    assert.equal(metricValue(text, 'webhook_claim_duration_seconds'), null);
  });

  it('takes a quantile of what a histogram observed between two scrapes as its bucket’s upper bound', () => {
    const before = histogramBuckets(
      scrape([
        ['0.01', 50],
        ['0.05', 50],
        ['0.1', 50],
        ['+Inf', 50],
      ]),
      'webhook_claim_duration_seconds',
    );
    // Between the scrapes: 98 claims under 10 ms, 1 under 50 ms, 1 under 100 ms.
    const after = histogramBuckets(
      scrape([
        ['0.01', 148],
        ['0.05', 149],
        ['0.1', 150],
        ['+Inf', 150],
      ]),
      'webhook_claim_duration_seconds',
    )!;
    assert.equal(histogramQuantile(before, after, 0.5), 0.01);
    assert.equal(histogramQuantile(before, after, 0.99), 0.05);
    assert.equal(histogramQuantile(before, after, 1), 0.1);
    assert.equal(histogramQuantile(after, after, 0.99), null);
    assert.equal(histogramBuckets('webhook_pending_deliveries 3', 'webhook_claim_duration_seconds'), null);
  });

  it('says a quantile above the largest finite bucket is unbounded', () => {
    const after = histogramBuckets(
      scrape([
        ['0.05', 1],
        ['+Inf', 10],
      ]),
      'webhook_claim_duration_seconds',
    )!;
    assert.equal(histogramQuantile(null, after, 0.99), Infinity);
  });
});
