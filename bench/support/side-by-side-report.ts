import type { RunFigures } from './measured-run';
import type { ScenarioKind } from './side-by-side-scenarios';
import type { WebhookDeliveryReport } from '../webhook-delivery.bench';
import { median } from './median';

/**
 * Medians over rounds, service/peer ratios, the speed targets (each
 * met or not; a miss never fails the run), and the Markdown table.
 */
export type Figure = Exclude<keyof RunFigures, 'requests' | 'failures'>;
const FIGURES: Figure[] = ['requestsPerSecond', 'p50Ms', 'p99Ms', 'serverCpuMicros', 'postgresCpuMicros', 'peakRssMiB'];

export interface ScenarioResult {
  name: string;
  kind: ScenarioKind;
  rounds: { service: RunFigures[]; peer: RunFigures[] };
  median: { service: Record<Figure, number>; peer: Record<Figure, number> };
  /** service / peer of each median. */
  ratio: Record<Figure, number>;
  failures: { service: number; peer: number };
}

export interface Target {
  what: string;
  value: string;
  goal: string;
  met: boolean;
}

const ratioOf = (service: number, peer: number): number => (peer === 0 ? 0 : Math.round((service / peer) * 100) / 100);

export function summarise(name: string, kind: ScenarioKind, rounds: ScenarioResult['rounds']): ScenarioResult {
  const medians = (runs: RunFigures[]): Record<Figure, number> =>
    Object.fromEntries(FIGURES.map((figure) => [figure, median(runs.map((run) => run[figure]))])) as Record<
      Figure,
      number
    >;
  const service = medians(rounds.service);
  const peer = medians(rounds.peer);
  return {
    name,
    kind,
    rounds,
    median: { service, peer },
    ratio: Object.fromEntries(FIGURES.map((figure) => [figure, ratioOf(service[figure], peer[figure])])) as Record<
      Figure,
      number
    >,
    failures: {
      service: rounds.service.reduce((sum, run) => sum + run.failures, 0),
      peer: rounds.peer.reduce((sum, run) => sum + run.failures, 0),
    },
  };
}

export function targets(results: ScenarioResult[], webhooks: WebhookDeliveryReport | null): Target[] {
  const list: Target[] = [];
  const atLeast = (what: string, value: number, goal: number): void =>
    void list.push({ what, value: `${value}×`, goal: `≥ ${goal}×`, met: value >= goal });
  const atMost = (what: string, value: number, goal: number): void =>
    void list.push({ what, value: `${value}×`, goal: `≤ ${goal}×`, met: value <= goal });
  for (const result of results) {
    if (result.kind === 'read') {
      atLeast(`${result.name}: requests/s vs peer`, result.ratio.requestsPerSecond, 0.8);
      atMost(`${result.name}: p99 vs peer`, result.ratio.p99Ms, 1.5);
      atMost(`${result.name}: server CPU per request vs peer`, result.ratio.serverCpuMicros, 1.3);
      atMost(`${result.name}: PostgreSQL CPU per request vs peer`, result.ratio.postgresCpuMicros, 1.2);
    } else if (result.kind === 'write') {
      atLeast(`${result.name}: requests/s vs peer`, result.ratio.requestsPerSecond, 0.6);
    }
  }
  if (results.length > 0) {
    const peak = Math.max(...results.flatMap((result) => result.rounds.service.map((run) => run.peakRssMiB)));
    list.push({ what: 'service peak RSS under load', value: `${peak} MiB`, goal: '< 160 MiB', met: peak < 160 });
  }
  const pageTwo = results.find((result) => result.name === 'events page 2');
  const deep = results.find((result) => result.name.startsWith('events page 1,000'));
  if (pageTwo !== undefined && deep !== undefined) {
    const ratio = ratioOf(deep.median.service.requestsPerSecond, pageTwo.median.service.requestsPerSecond);
    list.push({
      what: 'service requests/s, page 1,000 vs page 2',
      value: `${ratio}×`,
      goal: 'within 10% (0.9× to 1.1×)',
      met: ratio >= 0.9 && ratio <= 1.1,
    });
  }
  if (webhooks !== null) {
    const rate = webhooks.latency.confirmationsPerSecond ?? 0;
    const p99 = webhooks.latency.confirmToArrivalMs.p99;
    list.push({
      what: `webhook confirmation → arrival p99 at ${rate} confirmations/s`,
      value: `${p99} ms`,
      goal: '< 50 ms',
      met: p99 < 50,
    });
    const perSecond = webhooks.throughput.deliveriesPerSecond;
    list.push({
      what: 'signed webhook deliveries/s to a local receiver',
      value: `${perSecond}/s`,
      goal: '≥ 1500/s',
      met: perSecond >= 1500,
    });
  }
  for (const result of results) {
    if (result.failures.service + result.failures.peer > 0) {
      list.push({
        what: `${result.name}: every answer 2xx`,
        value: `${result.failures.service} service / ${result.failures.peer} peer failures`,
        goal: '0',
        met: false,
      });
    }
  }
  return list;
}

export function markdownTable(results: ScenarioResult[]): string {
  const pair = (result: ScenarioResult, figure: Figure): string =>
    `${result.median.service[figure]} / ${result.median.peer[figure]} (${result.ratio[figure]}×)`;
  const lines = [
    '| Scenario | requests/s service / peer (ratio) | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req | peak RSS MiB |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const result of results) {
    const cells = FIGURES.map((figure) => pair(result, figure));
    lines.push(`| ${result.name} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

export function markdownTargets(list: Target[]): string {
  return list
    .map((target) => `- ${target.met ? 'met' : 'not met'}: ${target.what}: ${target.value} (target ${target.goal})`)
    .join('\n');
}
