import assert from 'node:assert/strict';
import type { LoadRequest } from './measured-run';
import type { Scenario, ScenarioData } from './side-by-side-scenarios';

interface Answer {
  status: number;
  headers: Headers;
  body: { data?: Record<string, unknown>; next_cursor?: string | null };
}

async function call(base: string, key: string, request: LoadRequest): Promise<Answer> {
  const response = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: {
      authorization: `Bearer ${key}`,
      ...request.headers,
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: request.body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Answer['body'] };
}

const CONTRACT_HEADERS = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/**
 * Before anything is measured, the service and the peer must give the same
 * answer to every scenario: the same status and body (minus what a write
 * sets afresh), the contract's headers, the same ETag for one event, and the
 * page-2 cursor the bench computed must be the one the service hands out.
 */
export async function assertSameAnswers(
  scenarios: Scenario[],
  urls: { service: string; peer: string },
  key: string,
  data: ScenarioData,
): Promise<void> {
  for (const scenario of scenarios) {
    const request = scenario.request(0);
    const fromService = await call(urls.service, key, request);
    const fromPeer = await call(urls.peer, key, scenario.request(0));
    assert.ok(fromService.status < 300, `${scenario.name}: the service answered ${fromService.status}`);
    assert.deepEqual(
      scenario.comparable(fromPeer.status, fromPeer.body),
      scenario.comparable(fromService.status, fromService.body),
      `${scenario.name}: the peer and the service disagree`,
    );
    for (const header of CONTRACT_HEADERS) {
      assert.ok(fromService.headers.has(header) && fromPeer.headers.has(header), `${scenario.name}: ${header}`);
    }
    if (request.method === 'GET' && request.path.startsWith('/v1/events/')) {
      assert.equal(fromPeer.headers.get('etag'), fromService.headers.get('etag'), `${scenario.name}: ETag`);
    }
    if (scenario.name === 'events first page') {
      assert.equal(fromService.body.next_cursor, data.pageTwoCursor, 'the service hands out the page-2 cursor');
    }
  }
}
