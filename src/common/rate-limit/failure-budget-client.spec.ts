import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_KNOWN_PREFIXES, failureBudgetClient, knownPrefixCount } from './failure-budget-client';

describe('failureBudgetClient', () => {
  it('counts an IPv4 address as one client', () => {
    assert.equal(failureBudgetClient('192.0.2.1'), '192.0.2.1');
    assert.notEqual(failureBudgetClient('192.0.2.1'), failureBudgetClient('192.0.2.2'));
  });

  it('counts every IPv6 address of one /64 as one client, and another /64 as another', () => {
    const client = failureBudgetClient('2001:db8:1:2:3:4:5:6');
    assert.equal(client, '2001:db8:1:2::/64');
    assert.equal(failureBudgetClient('2001:db8:1:2:ffff:ffff:ffff:ffff'), client);
    assert.equal(failureBudgetClient('2001:0db8:0001:0002::1'), client, 'however the address is written');
    assert.notEqual(failureBudgetClient('2001:db8:1:3::1'), client);
  });

  it('counts an IPv4 address written as IPv6 as that IPv4 address', () => {
    assert.equal(failureBudgetClient('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(failureBudgetClient('::FFFF:c000:201'), '192.0.2.1', 'also in hexadecimal');
  });

  it('remembers at most a bounded number of addresses, however many a host rotates through', () => {
    for (let host = 0; host < MAX_KNOWN_PREFIXES * 3; host += 1) {
      assert.equal(failureBudgetClient(`2001:db8:9:9::${host.toString(16)}`), '2001:db8:9:9::/64');
    }
    assert.ok(knownPrefixCount() <= MAX_KNOWN_PREFIXES, `${knownPrefixCount()} addresses remembered`);
  });
});
