import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { grantFor, LARGEST_RESERVATION_BLOCK, RESERVATION_BLOCK, reservationBlock } from './reservation-rule';

/** One shared counter (the database row) and N instances serving from the blocks it grants them. */
class Simulation {
  granted = 0;
  served = 0;
  /** The most units any instance held at once. */
  mostHeld = 0;
  /** Reservations made while the instance still held units. */
  askedAhead = 0;
  readonly held: number[];
  /** Whether an instance's last grant was all it asked for (far from the limit), which lets it ask ahead. */
  readonly whole: boolean[];
  readonly block: number;

  constructor(
    readonly limit: number,
    readonly instances: number,
  ) {
    this.held = new Array<number>(instances).fill(0);
    this.whole = new Array<boolean>(instances).fill(false);
    this.block = reservationBlock(limit);
  }

  private reserve(i: number, want: number): void {
    const grant = grantFor(want, this.limit - this.granted, this.instances);
    this.granted += grant;
    this.held[i] = (this.held[i] ?? 0) + grant;
    this.whole[i] = grant === want;
    this.mostHeld = Math.max(this.mostHeld, this.held[i] ?? 0);
  }

  /**
   * A request arriving at instance `i`: served from its block, or after a
   * reservation; false when refused. Then, as the storage does, an instance
   * whose grants are whole asks ahead for the rest of a block when a quarter is left.
   */
  request(i: number): boolean {
    if ((this.held[i] ?? 0) === 0) this.reserve(i, this.block);
    if ((this.held[i] ?? 0) === 0) return false;
    this.held[i] = (this.held[i] ?? 0) - 1;
    this.served += 1;
    const held = this.held[i] ?? 0;
    if (this.whole[i] === true && held > 0 && held <= this.block / 4) {
      this.askedAhead += 1;
      this.reserve(i, this.block - held);
    }
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
    for (const limit of [5, 120, 599, 600, 1000, 100_000]) {
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

  it('leaves at most (instances − 1) · min(block, limit / (2 · instances)) unused when an instance stops getting requests, asking ahead included', () => {
    for (const limit of [5, 120, 600, 100_000]) {
      for (const instances of [2, 3, 4]) {
        for (let seed = 1; seed <= 20; seed += 1) {
          const next = random(seed * 104729 + limit);
          const simulation = new Simulation(limit, instances);
          // Random traffic that may leave any instance idle, up to a refusal at instance 0.
          while (simulation.request(next() < 0.5 ? 0 : Math.floor(next() * instances)));
          const block = reservationBlock(limit);
          const bound = (instances - 1) * Math.max(1, Math.min(block, Math.floor(limit / (2 * instances))));
          assert.ok(simulation.unused() <= bound, `unused ${simulation.unused()} > ${bound}`);
          assert.equal(simulation.served + simulation.unused(), simulation.granted);
        }
      }
    }
  });

  it('never lets an instance hold more than one block, asking ahead included', () => {
    for (const limit of [600, 20_000, 100_000]) {
      for (const instances of [1, 2, 3]) {
        const next = random(limit + instances);
        const simulation = new Simulation(limit, instances);
        while (simulation.request(Math.floor(next() * instances)));
        assert.ok(simulation.mostHeld <= simulation.block, `held ${simulation.mostHeld} > ${simulation.block}`);
        assert.ok(simulation.askedAhead > 0, 'the instances did ask ahead');
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

  it('asks for blocks of 16 units up to a limit of 4,096, then 1/256 of the limit, never more than 256', () => {
    assert.equal(reservationBlock(600), RESERVATION_BLOCK);
    assert.equal(reservationBlock(120), RESERVATION_BLOCK);
    assert.equal(reservationBlock(4_096), RESERVATION_BLOCK);
    assert.equal(reservationBlock(20_000), 78);
    assert.equal(reservationBlock(65_536), LARGEST_RESERVATION_BLOCK);
    assert.equal(reservationBlock(10_000_000), LARGEST_RESERVATION_BLOCK);
    for (const limit of [1, 600, 4_096, 20_000, 65_536, 10_000_000]) {
      assert.ok(
        limit < 4_096 || reservationBlock(limit) <= limit / 256,
        `a block of a limit of ${limit} is at most 1/256 of it`,
      );
    }
  });
});
