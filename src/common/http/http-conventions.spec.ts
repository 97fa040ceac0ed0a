import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AuthContext } from '../auth-context/access';
import { installRequestAuthentication } from '../auth-context/request-authentication';
import { DomainError } from '../errors/domain-error';
import { ClientFailureBudget } from '../rate-limit/client-failure-budget';
import { installHttpConventions } from './http-conventions';
import { RouteMiss } from './route-miss';
import { RouteTable } from './route-table';

const GOOD_KEY = 'Bearer good';
const CALLER: AuthContext = {
  principal: { type: 'organiser', id: 'org_1' },
  scopes: [],
  keyId: 'key_1',
  keyPrefix: 'svc_live_000000…',
};

/**
 * The conventions' hooks with the request authentication behind them, on a
 * bare Fastify: a good key is accepted in the same turn (as a cached key is),
 * any other after a lookup that takes a moment, and the one route answers
 * once every request sent has reached it or a moment has passed.
 */
async function serverWithBudget(limit: number): Promise<FastifyInstance> {
  const fastify = Fastify();
  installHttpConventions(fastify, new RouteTable(), new ClientFailureBudget(limit, 60), () => false);
  installRequestAuthentication(
    fastify,
    {
      authenticate: (authorization) =>
        authorization === GOOD_KEY ? CALLER : new Promise((found) => setTimeout(() => found(null), 20)),
    },
    () => false,
  );
  fastify.setErrorHandler((error, _request, reply) => {
    if (error instanceof RouteMiss) return reply.code(404).send({ error: 'not_found' });
    if (error instanceof DomainError)
      return reply.code(error.status).headers(error.headers).send({ error: error.code });
    return reply.code(500).send({ error: 'internal' });
  });
  fastify.get('/v1/me', async () => {
    await new Promise((later) => setTimeout(later, 30));
    return { data: {} };
  });
  await fastify.ready();
  return fastify;
}

async function statusesOf(fastify: FastifyInstance, authorizations: string[]): Promise<number[]> {
  const answers = await Promise.all(
    authorizations.map((authorization) => fastify.inject({ method: 'GET', url: '/v1/me', headers: { authorization } })),
  );
  return answers.map((answer) => answer.statusCode);
}

describe('installHttpConventions and the failure budget', () => {
  it('answers a burst of requests with unknown keys 401 up to the failure budget’s figure and 429 past it', async () => {
    const fastify = await serverWithBudget(3);
    try {
      const statuses = await statusesOf(
        fastify,
        Array.from({ length: 8 }, (_, i) => `Bearer unknown-${i}`),
      );
      assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429, 429, 429]);
    } finally {
      await fastify.close();
    }
  });

  it('stops counting a request as a possible failure once its key is accepted, so a client’s concurrent requests with a good key pass', async () => {
    const fastify = await serverWithBudget(3);
    try {
      assert.deepEqual(
        await statusesOf(
          fastify,
          Array.from({ length: 8 }, () => GOOD_KEY),
        ),
        Array.from({ length: 8 }, () => 200),
      );
      assert.deepEqual(
        await statusesOf(fastify, ['Bearer unknown-1', 'Bearer unknown-2', 'Bearer unknown-3', GOOD_KEY]),
        [401, 401, 401, 429],
      );
    } finally {
      await fastify.close();
    }
  });
});
