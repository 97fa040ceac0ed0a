import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WebhookDeliveryReport } from '../webhook-delivery.bench';
import type { RunFigures } from './measured-run';
import { markdownTable, summarise, targets, type ScenarioResult } from './side-by-side-report';

const PEER: RunFigures = {
  requestsPerSecond: 1000,
  p50Ms: 10,
  p99Ms: 20,
  serverCpuMicros: 500,
  postgresCpuMicros: 400,
  peakRssMiB: 100,
  requests: 10_000,
  failures: 0,
};

function scenario(name: string, kind: ScenarioResult['kind'], service: Partial<RunFigures>): ScenarioResult {
  return summarise(name, kind, { service: [{ ...PEER, ...service }], peer: [PEER] });
}

function verdicts(results: ScenarioResult[], webhooks: WebhookDeliveryReport | null = null): Map<string, boolean> {
  return new Map(targets(results, webhooks).map((target) => [target.what, target.met]));
}

function webhookReport(p99: number, deliveriesPerSecond: number): WebhookDeliveryReport {
  return {
    latency: {
      deliveries: 100,
      confirmationsPerSecond: 50,
      confirmToArrivalMs: { p50: 5, p99, max: p99 },
      coldStart: { deliveries: 50, maxMs: p99 },
    },
    throughput: {
      subscriptions: 10,
      confirmations: 100,
      deliveries: 1000,
      rounds: [],
      confirmSeconds: 1,
      totalSeconds: 1,
      deliveriesPerSecond,
      receiverMaxInFlight: 8,
      cpuMicrosPerDelivery: { service: 300, postgres: 300, bench: 100 },
    },
  };
}

describe('side-by-side report', () => {
  it('takes the median of the rounds and divides the service by the peer', () => {
    const result = summarise('s', 'read', {
      service: [900, 700, 800].map((requestsPerSecond) => ({ ...PEER, requestsPerSecond })),
      peer: [1000, 1000, 1000].map((requestsPerSecond) => ({ ...PEER, requestsPerSecond })),
    });
    assert.equal(result.median.service.requestsPerSecond, 800);
    assert.equal(result.ratio.requestsPerSecond, 0.8);
  });

  it('a read meets its targets at exactly 0.8× requests/s, 1.5× p99, 1.3× server CPU and 1.2× PostgreSQL CPU', () => {
    const met = verdicts([
      scenario('r', 'read', { requestsPerSecond: 800, p99Ms: 30, serverCpuMicros: 650, postgresCpuMicros: 480 }),
    ]);
    assert.deepEqual(
      [...met.entries()].filter(([what]) => what.startsWith('r:')).map(([, ok]) => ok),
      [true, true, true, true],
    );
  });

  it('a read misses each target just past its threshold', () => {
    const met = verdicts([
      scenario('r', 'read', { requestsPerSecond: 790, p99Ms: 31, serverCpuMicros: 660, postgresCpuMicros: 490 }),
    ]);
    assert.deepEqual(
      [...met.entries()].filter(([what]) => what.startsWith('r:')).map(([, ok]) => ok),
      [false, false, false, false],
    );
  });

  it('a write needs 0.6× the peer requests/s and nothing else', () => {
    const met = verdicts([
      scenario('ok', 'write', { requestsPerSecond: 600, serverCpuMicros: 5000 }),
      scenario('slow', 'write', { requestsPerSecond: 590 }),
    ]);
    assert.equal(met.get('ok: requests/s vs peer'), true);
    assert.equal(met.get('slow: requests/s vs peer'), false);
    assert.equal([...met.keys()].filter((what) => what.startsWith('ok:')).length, 1);
  });

  it('the service peak RSS under load must stay under 160 MiB in every run', () => {
    assert.equal(verdicts([scenario('r', 'read', { peakRssMiB: 159.9 })]).get('service peak RSS under load'), true);
    assert.equal(verdicts([scenario('r', 'read', { peakRssMiB: 160 })]).get('service peak RSS under load'), false);
  });

  it('page 1,000 must serve within 10% of the requests/s of page 2', () => {
    const at = (deep: number): boolean | undefined =>
      verdicts([
        scenario('events page 2', 'reference', { requestsPerSecond: 1000 }),
        scenario('events page 1,000 (page 1,000)', 'read', { requestsPerSecond: deep }),
      ]).get('service requests/s, page 1,000 vs page 2');
    assert.equal(at(900), true);
    assert.equal(at(1100), true);
    assert.equal(at(890), false);
    assert.equal(at(1110), false);
  });

  it('webhooks need a p99 under 50 ms at 50 confirmations/s and 1,500 deliveries/s', () => {
    const good = verdicts([], webhookReport(49.9, 1500));
    assert.deepEqual([...good.values()], [true, true]);
    const bad = verdicts([], webhookReport(50, 1499));
    assert.deepEqual([...bad.values()], [false, false]);
  });

  it('a scenario with non-2xx answers or errors is a missed target', () => {
    const met = verdicts([scenario('r', 'read', { failures: 3 })]);
    assert.equal(met.get('r: every answer 2xx'), false);
  });

  it('prints one table row per scenario with both medians and the ratio', () => {
    const table = markdownTable([scenario('events first page', 'read', { requestsPerSecond: 500 })]);
    assert.match(table, /\| events first page \| 500 \/ 1000 \(0\.5×\) \|/);
  });
});
