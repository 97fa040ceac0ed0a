import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { internalApi } from './support/http-client';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

/** The repository's ops/ folder (tests run from dist/test). */
const OPS = resolve(__dirname, '..', '..', 'ops');
const ALERTS = join(OPS, 'prometheus-alerts.yml');
const DASHBOARD = join(OPS, 'grafana-dashboard.json');

const promtoolPresent = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).error === undefined;
const NO_PROMTOOL = 'promtool is not installed (Debian package "prometheus"): the alert rules are not checked';

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { cwd: OPS, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Metric names used in selectors (`name{...}`); `up` is Prometheus's own. */
function metricNamesIn(expressions: string[]): Set<string> {
  const names = new Set<string>();
  for (const expression of expressions) {
    for (const [, name = ''] of expression.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)) {
      if (name !== 'up') names.add(name);
    }
  }
  return names;
}

describe('ops/prometheus-alerts.yml and ops/grafana-dashboard.json', () => {
  it('alert rules pass promtool check rules', { skip: promtoolPresent ? false : NO_PROMTOOL }, () => {
    const checked = promtool('check', 'rules', ALERTS);
    assert.equal(checked.status, 0, checked.output);
    assert.match(checked.output, /SUCCESS: 4 rules found/);
  });

  it(
    'alert rules fire as meant (promtool test rules): readiness down, delivery lag over 5 minutes, 5xx ratio over 1%, and stay quiet below',
    { skip: promtoolPresent ? false : NO_PROMTOOL },
    () => {
      const tested = promtool('test', 'rules', 'prometheus-alerts.test.yml');
      assert.equal(tested.status, 0, tested.output);
    },
  );

  it('the alerts name readiness, a 300-second delivery lag and a 1% 5xx ratio', () => {
    const alerts = readFileSync(ALERTS, 'utf8');
    assert.match(
      alerts,
      /alert: EventsApiNotReady\n\s+# [^\n]*\n[^\n]*\n\s+expr: service_ready\{job="events-api"\} == 0/,
    );
    assert.match(alerts, /webhook_delivery_lag_seconds\{job="events-api"\}\) > 300/);
    assert.match(alerts, /\) > 0\.01/);
  });

  it('alerts when a transaction holds the xmin horizon for over 600 seconds', () => {
    const alerts = readFileSync(ALERTS, 'utf8');
    assert.match(
      alerts,
      /alert: DatabaseXminHorizonHeld\n(?:\s+#[^\n]*\n)*\s+expr: max without \(instance, pod\) \(db_oldest_transaction_seconds\{job="events-api"\}\) > 600\n/,
    );
  });

  describe('against a running service', () => {
    let service: TestService;
    let exposed: Set<string>;
    const app = withApp();
    before(async () => {
      ({ service } = app);
      const text = (await internalApi(service)('GET', '/internal/metrics')).text;
      exposed = new Set(
        text
          .split('\n')
          .filter((line) => line.startsWith('# TYPE '))
          .flatMap((line) => {
            const [, , name = '', type] = line.split(' ');
            return type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
          }),
      );
    });

    it('every metric the dashboard and the alerts query is one the service exposes', () => {
      const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
        panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
      };
      const dashboardExpressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
      const alertExpressions = [readFileSync(ALERTS, 'utf8')];
      const used = metricNamesIn([...dashboardExpressions, ...alertExpressions]);
      assert.ok(used.size >= 10);
      for (const name of used) assert.ok(exposed.has(name), `${name} is exposed by GET /internal/metrics`);
    });

    it('the dashboard shows request rate, errors and p99 by route, deliveries by outcome, delivery lag and disabled subscriptions', () => {
      const dashboard = readFileSync(DASHBOARD, 'utf8');
      for (const query of [
        'sum by (route) (rate(http_requests_total',
        'sum by (route, status) (rate(http_requests_total{job=\\"$job\\", status=~\\"5..\\"}',
        'histogram_quantile(0.99, sum by (route, le) (rate(http_request_duration_seconds_bucket',
        'sum by (outcome) (rate(webhook_deliveries_total',
        'max(webhook_delivery_lag_seconds',
        'max(webhook_disabled_subscriptions',
      ]) {
        assert.ok(dashboard.includes(query), query);
      }
    });
  });
});
