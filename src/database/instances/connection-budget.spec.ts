import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REPLACEMENT_RETRY_SECONDS, connectionBudgetProblem } from './connection-budget';

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
    const beside = connectionBudgetProblem(
      { ...server, other_instances: 2, other_connections: 42 },
      { poolMax: 60, dedicated: 1 },
    );
    assert.match(beside ?? '', new RegExp(`start it again in ${REPLACEMENT_RETRY_SECONDS} s`));
    const alone = connectionBudgetProblem(
      { ...server, other_instances: 2, other_connections: 42 },
      { poolMax: 97, dedicated: 1 },
    );
    assert.doesNotMatch(alone ?? '', /start it again/, 'a pool the server cannot hold alone fits no sooner later');
  });
});
