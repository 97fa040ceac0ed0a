import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { grantFor, RESERVATION_BLOCK } from './reservation-rule';

/** One shared counter (the database row) and N instances serving from the blocks it grants them. */
class Simulation {
  granted = 0;
  served = 0;
  readonly held: number[];

  constructor(
    readonly limit: number,
    readonly instances: number,
  ) {
    this.held = new Array<number>(instances).fill(0);
  }

  /** A request arriving at instance `i`: served from its block, or after a reservation; false when refused. */
  request(i: number): boolean {
    if ((this.held[i] ?? 0) === 0) {
      const grant = grantFor(RESERVATION_BLOCK, this.limit - this.granted, this.instances);
      this.granted += grant;
      this.held[i] = grant;
    }
    if ((this.held[i] ?? 0) === 0) return false;
    this.held[i] = (this.held[i] ?? 0) - 1;
    this.served += 1;
    return true;
  }

  unused(): number {
    return this.held.reduce((sum, units) => sum + units, 0);
  }
}

/** A small deterministic generator, so a failing interleaving can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('the reservation rule of the shared account budget', () => {
  it('never grants past the limit, whatever the interleaving of instances', () => {
    for (const limit of [1, 2, 5, 120, 600]) {
      for (const instances of [1, 2, 3, 5]) {
        for (let seed = 1; seed <= 20; seed += 1) {
          const next = random(seed * 7919 + limit + instances);
          const simulation = new Simulation(limit, instances);
          for (let request = 0; request < limit * 3; request += 1) simulation.request(Math.floor(next() * instances));
          assert.ok(simulation.granted <= limit, `granted ${simulation.granted} of ${limit}`);
          assert.ok(simulation.served <= limit, `served ${simulation.served} of ${limit}`);
        }
      }
    }
  });

  it('leaves at most one unit per other instance unused when requests are spread over every instance', () => {
    for (const limit of [5, 120, 599, 600, 1000]) {
      for (const instances of [1, 2, 3, 4]) {
        // Round robin, as a load balancer spreads requests, up to the first refusal.
        const simulation = new Simulation(limit, instances);
        let i = 0;
        while (simulation.request(i % instances)) i += 1;
        assert.equal(simulation.held[i % instances], 0, 'the refused instance holds nothing');
        assert.ok(
          simulation.served >= limit - (instances - 1),
          `${instances} instances, limit ${limit}: served ${simulation.served}, unused ${simulation.unused()}`,
        );
        assert.ok(simulation.served <= limit);
      }
    }
  });

  it('leaves at most (instances − 1) · min(block, limit / (2 · instances)) unused when an instance stops getting requests', () => {
    for (const limit of [5, 120, 600]) {
      for (const instances of [2, 3, 4]) {
        for (let seed = 1; seed <= 20; seed += 1) {
          const next = random(seed * 104729 + limit);
          const simulation = new Simulation(limit, instances);
          // Random traffic that may leave any instance idle, up to a refusal at instance 0.
          while (simulation.request(next() < 0.5 ? 0 : Math.floor(next() * instances)));
          const bound = (instances - 1) * Math.max(1, Math.min(RESERVATION_BLOCK, Math.floor(limit / (2 * instances))));
          assert.ok(simulation.unused() <= bound, `unused ${simulation.unused()} > ${bound}`);
          assert.equal(simulation.served + simulation.unused(), simulation.granted);
        }
      }
    }
  });

  it('shrinks a reservation to one unit in the last 2 · instances units of the budget', () => {
    assert.equal(grantFor(RESERVATION_BLOCK, 600, 2), RESERVATION_BLOCK);
    assert.equal(grantFor(RESERVATION_BLOCK, 40, 2), 10);
    assert.equal(grantFor(RESERVATION_BLOCK, 3, 2), 1);
    assert.equal(grantFor(RESERVATION_BLOCK, 1, 1), 1);
    assert.equal(grantFor(RESERVATION_BLOCK, 0, 3), 0);
    assert.equal(grantFor(RESERVATION_BLOCK, -2, 3), 0);
  });
});
