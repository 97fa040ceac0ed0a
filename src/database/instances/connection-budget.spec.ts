import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEDICATED_CONNECTIONS,
  REPLACEMENT_RETRY_SECONDS,
  connectionBudgetProblem,
  dedicatedConnections,
} from './connection-budget';

const server = {
  max_connections: 100,
  superuser_reserved: 3,
  reserved: 0,
  other_instances: 0,
  other_connections: 0,
  late_instances: 0,
  late_connections: 0,
};

describe('the connection budget', () => {
  it('lets an instance start when every live pool, its own and the dedicated connections fit', () => {
    assert.equal(connectionBudgetProblem(server, { poolMax: 95, dedicated: 2 }), null);
    const others = { ...server, other_instances: 3, other_connections: 66 };
    assert.equal(connectionBudgetProblem(others, { poolMax: 29, dedicated: 2 }), null);
  });

  it('refuses an instance that would not fit, naming what it needs and what the server allows', () => {
    const others = { ...server, other_instances: 3, other_connections: 66 };
    const problem = connectionBudgetProblem(others, { poolMax: 30, dedicated: 2 }) ?? '';
    assert.match(problem, /DB_POOL_MAX=30/);
    assert.match(problem, /would need 98 connections/);
    assert.match(problem, /the server allows 97 \(max_connections 100 less 3 reserved\)/);
  });

  it('names one dedicated connection in the singular', () => {
    const problem = connectionBudgetProblem(server, { poolMax: 97, dedicated: 1 }) ?? '';
    assert.match(problem, /its 1 dedicated connection\)/);
    assert.match(connectionBudgetProblem(server, { poolMax: 96, dedicated: 2 }) ?? '', /its 2 dedicated connections\)/);
  });

  it("counts PostgreSQL 16's reserved_connections with the superuser's", () => {
    const problem = connectionBudgetProblem({ ...server, reserved: 5 }, { poolMax: 92, dedicated: 2 }) ?? '';
    assert.match(problem, /would need 94 connections.*allows 92 \(max_connections 100 less 8 reserved\)/);
  });

  it('tells an instance refused beside others, that would fit alone, to start again once one killed a moment ago has missed a heartbeat', () => {
    const late = { other_instances: 2, other_connections: 42, late_instances: 2, late_connections: 42 };
    const beside = connectionBudgetProblem({ ...server, ...late }, { poolMax: 60, dedicated: 1 });
    assert.match(beside ?? '', new RegExp(`start it again in ${REPLACEMENT_RETRY_SECONDS} s`));
    const alone = connectionBudgetProblem({ ...server, ...late }, { poolMax: 97, dedicated: 1 });
    assert.doesNotMatch(alone ?? '', /start it again/, 'a pool the server cannot hold alone fits no sooner later');
  });

  it('gives the hint to start again only when an instance that missed a heartbeat counts in the sum', () => {
    const live = { ...server, other_instances: 2, other_connections: 42 };
    const refused = connectionBudgetProblem(live, { poolMax: 60, dedicated: 1 });
    assert.match(refused ?? '', /does not fit the database server/);
    assert.doesNotMatch(refused ?? '', /start it again|heartbeat/, 'every other instance heartbeats: no wait helps');
    const oneLate = connectionBudgetProblem(
      { ...live, late_instances: 1, late_connections: 21 },
      { poolMax: 60, dedicated: 1 },
    );
    assert.match(oneLate ?? '', /1 of the other instances \(21 connections\) missed a heartbeat/);
    assert.match(oneLate ?? '', new RegExp(`start it again in ${REPLACEMENT_RETRY_SECONDS} s`));
  });

  it("counts the embedded server's keeper connection among the dedicated ones of an instance that keeps it", () => {
    assert.equal(dedicatedConnections({ keepsEmbeddedServer: false }), DEDICATED_CONNECTIONS);
    assert.equal(dedicatedConnections({ keepsEmbeddedServer: true }), DEDICATED_CONNECTIONS + 1);
  });
});
