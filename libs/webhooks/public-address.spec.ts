import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type AddressLookup,
  checkWebhookUrl,
  checkWebhookUrlResolving,
  cidrContains,
  isPortAllowed,
  isPublicAddress,
  parseCidr,
  parseCidrList,
  resolvePublicAddress,
} from './public-address';

function cidr(text: string) {
  const parsed = parseCidr(text);
  assert.ok(parsed, `${text} should parse`);
  return parsed;
}

const ipv4Octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
const hex16 = (high: number, low: number): string => ((high << 8) | low).toString(16);

void describe('parseCidr and cidrContains', () => {
  void it('matches IPv4 addresses inside the block and not just outside it', () => {
    const block = cidr('10.0.0.0/8');
    assert.equal(block.family, 4);
    assert.equal(block.prefixLength, 8);
    assert.ok(cidrContains(block, '10.0.0.0'));
    assert.ok(cidrContains(block, '10.255.255.255'));
    assert.ok(!cidrContains(block, '9.255.255.255'));
    assert.ok(!cidrContains(block, '11.0.0.0'));
  });

  void it('matches IPv6 addresses inside the block and not just outside it', () => {
    const block = cidr('fd00::/8');
    assert.equal(block.family, 6);
    assert.ok(cidrContains(block, 'fd00:ec2::254'));
    assert.ok(cidrContains(block, 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'));
    assert.ok(!cidrContains(block, 'fc00::1'));
    assert.ok(!cidrContains(block, 'fe00::'));
  });

  void it('matches the ::ffff: mapped forms of an address against an IPv4 block', () => {
    const block = cidr('127.0.0.0/8');
    assert.ok(cidrContains(block, '::ffff:127.0.0.1'));
    assert.ok(cidrContains(block, '::ffff:7f00:1'));
    assert.ok(cidrContains(block, '[::ffff:7f00:1]'));
    assert.ok(!cidrContains(block, '::127.0.0.1'));
    assert.ok(!cidrContains(block, '::ffff:8.8.8.8'));
  });

  void it('reads a bare address as a block of that one address', () => {
    const block = cidr('192.0.2.7');
    assert.equal(block.prefixLength, 32);
    assert.ok(cidrContains(block, '192.0.2.7'));
    assert.ok(!cidrContains(block, '192.0.2.8'));
    assert.ok(cidrContains(cidr('::1'), '0:0:0:0:0:0:0:1'));
  });

  void it('lets /0 cover its whole family', () => {
    assert.ok(cidrContains(cidr('0.0.0.0/0'), '255.255.255.255'));
    assert.ok(!cidrContains(cidr('0.0.0.0/0'), '2606:4700::1111'));
    assert.ok(cidrContains(cidr('::/0'), '2606:4700::1111'));
  });

  void it('rejects out-of-range prefixes, bits set after the prefix, leading zeros and non-addresses', () => {
    for (const text of [
      '10.0.0.0/33',
      '::/129',
      '10.0.0.1/8',
      '192.168.1.0/2',
      'fd00::1/8',
      '256.0.0.0/8',
      '010.0.0.0/8',
      '10.0.0.0/08',
      '10.0.0.0/',
      '10.0.0.0/-1',
      '10.0.0/8',
      '1::2::3/128',
      '1:2:3:4:5:6:7::8/128',
      '1:2:3:4:5:6:7/128',
      'fe80::1%eth0/128',
      '[::1]/128',
      'localhost/32',
      '',
    ]) {
      assert.equal(parseCidr(text), null, text);
    }
  });

  void it('reads an IPv6 address the same however WHATWG URL compresses it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(0, 0, 0, 1, 0xffff, 0xfe80, 0x1234), { minLength: 8, maxLength: 8 }),
        (words) => {
          const expanded = words.map((word) => word.toString(16).padStart(4, '0')).join(':');
          const compressed = new URL(`https://[${expanded}]/`).hostname.slice(1, -1);
          assert.equal(parseCidr(compressed)?.first, parseCidr(expanded)?.first, `${compressed} vs ${expanded}`);
        },
      ),
    );
  });

  void it('reports an unparseable address as outside every block', () => {
    assert.ok(!cidrContains(cidr('0.0.0.0/0'), 'example.com'));
    assert.ok(!cidrContains(cidr('::/0'), ''));
  });
});

void describe('parseCidrList', () => {
  void it('parses every entry, trimming spaces and skipping blanks', () => {
    const list = parseCidrList([' 127.0.0.0/8', '', 'fd00::/8 ', '  ']);
    assert.deepEqual(
      list.map((entry) => entry.text),
      ['127.0.0.0/8', 'fd00::/8'],
    );
  });

  void it('throws an Error that names the invalid entry', () => {
    assert.throws(() => parseCidrList(['127.0.0.0/8', '10.0.0.300/8']), {
      name: 'Error',
      message: /invalid CIDR "10\.0\.0\.300\/8"/,
    });
  });
});

void describe('isPublicAddress', () => {
  const refusedIpv4: Array<[string, string[]]> = [
    ['0.0.0.0/8 (this network)', ['0.0.0.0', '0.255.255.255']],
    ['10.0.0.0/8 (private)', ['10.0.0.0', '10.1.2.3', '10.255.255.255']],
    ['100.64.0.0/10 (carrier-grade NAT)', ['100.64.0.0', '100.127.255.255', '100.100.100.200']],
    ['127.0.0.0/8 (loopback)', ['127.0.0.1', '127.255.255.254']],
    ['169.254.0.0/16 (link-local, cloud metadata)', ['169.254.0.1', '169.254.169.254', '169.254.170.2']],
    ['172.16.0.0/12 (private)', ['172.16.0.0', '172.31.255.255']],
    ['192.0.0.0/24 (IETF protocol assignments)', ['192.0.0.8', '192.0.0.170']],
    ['192.0.2.0/24 (TEST-NET-1)', ['192.0.2.1']],
    ['192.168.0.0/16 (private)', ['192.168.0.1', '192.168.255.255']],
    ['198.18.0.0/15 (benchmarking)', ['198.18.0.1', '198.19.255.255']],
    ['198.51.100.0/24 (TEST-NET-2)', ['198.51.100.1']],
    ['203.0.113.0/24 (TEST-NET-3)', ['203.0.113.1']],
    ['224.0.0.0/4 (multicast)', ['224.0.0.1', '239.255.255.250']],
    ['240.0.0.0/4 (reserved) and broadcast', ['240.0.0.1', '255.255.255.255']],
  ];
  for (const [range, addresses] of refusedIpv4) {
    void it(`refuses ${range}`, () => {
      for (const address of addresses) assert.equal(isPublicAddress(address), false, address);
    });
  }

  void it('accepts public IPv4 addresses, including those just outside the private ranges', () => {
    for (const address of [
      '1.1.1.1',
      '8.8.8.8',
      '93.184.216.34',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '126.255.255.255',
      '128.0.0.0',
      '169.253.255.255',
      '169.255.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.0.1.255',
      '192.0.3.0',
      '192.167.255.255',
      '192.169.0.0',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
    ]) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  void it('refuses the non-public IPv6 ranges', () => {
    for (const address of [
      '::',
      '::1',
      '0:0:0:0:0:0:0:1',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1',
      'fe80::1%eth0',
      'febf:ffff::1',
      'ff02::1',
      'ff05::1:3',
      '2001:db8::1',
      '2001:db8:ffff::1',
      '100::1',
      '100::ffff:ffff:ffff:ffff',
      '64:ff9b:1::1',
      'fec0::1',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });

  void it('judges ::ffff: mapped and 64:ff9b:: NAT64 addresses by the IPv4 address inside them', () => {
    for (const address of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '::ffff:10.0.0.1',
      '::ffff:0.0.0.0',
      '64:ff9b::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::c0a8:1',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
    for (const address of ['::ffff:8.8.8.8', '::ffff:5db8:d822', '64:ff9b::8.8.8.8', '64:ff9b::5db8:d822']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  void it('judges every IPv4 address the same in its dotted, mapped and NAT64 spellings', () => {
    fc.assert(
      fc.property(ipv4Octets, ([a, b, c, d]) => {
        const dotted = `${a}.${b}.${c}.${d}`;
        const expected = isPublicAddress(dotted);
        const hexTail = `${hex16(a, b)}:${hex16(c, d)}`;
        for (const spelling of [`::ffff:${dotted}`, `::ffff:${hexTail}`, `64:ff9b::${dotted}`, `64:ff9b::${hexTail}`]) {
          assert.equal(isPublicAddress(spelling), expected, `${spelling} vs ${dotted}`);
        }
      }),
    );
  });

  void it('accepts public IPv6 addresses', () => {
    for (const address of ['2606:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:80b::200e', '100:0:0:1::1']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  void it('refuses the deprecated forms that carry a private IPv4 address (::a.b.c.d, 6to4)', () => {
    assert.equal(isPublicAddress('::127.0.0.1'), false);
    assert.equal(isPublicAddress('2002:7f00:1::'), false);
    assert.equal(isPublicAddress('2002:a9fe:a9fe::1'), false);
    assert.equal(isPublicAddress('2002:808:808::1'), true);
  });

  void it('judges an address with a zone id by the address alone', () => {
    assert.equal(isPublicAddress('2606:4700::1111%eth0'), true);
    assert.equal(isPublicAddress('fe80::1%eth0'), false);
  });

  void it('refuses anything that is not an IP address, failing closed', () => {
    for (const address of ['', 'example.com', 'localhost', '1.2.3', '0177.0.0.1', '127.1', '2130706433', '1::2::3']) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });

  void it('treats addresses inside an allow-list block as public, and nothing else', () => {
    const allow = parseCidrList(['127.0.0.0/8']);
    assert.equal(isPublicAddress('127.0.0.1', allow), true);
    assert.equal(isPublicAddress('::ffff:127.0.0.1', allow), true);
    assert.equal(isPublicAddress('10.0.0.1', allow), false);
    assert.equal(isPublicAddress('::1', allow), false);
  });
});

void describe('checkWebhookUrl', () => {
  const refused: Array<[string, string, string]> = [
    ['an http url', 'http://example.com/hook', 'url must use https'],
    ['a non-web scheme', 'ftp://example.com/hook', 'url must use https'],
    ['a username in the url', 'https://user@example.com/hook', 'url must not contain a username or password'],
    ['a password in the url', 'https://user:pw@example.com/hook', 'url must not contain a username or password'],
    [
      'a fragment, which is never sent',
      'https://example.com/hook#section',
      'url must not contain a fragment (#…): it is never sent',
    ],
    ['an empty fragment', 'https://example.com/hook#', 'url must not contain a fragment (#…): it is never sent'],
    ['port 0, which nothing listens on', 'https://example.com:0/hook', 'url port must be from 1 to 65535'],
    ['a loopback address', 'https://127.0.0.1/hook', 'url host is not allowed'],
    ['a loopback address with a port', 'https://127.0.0.2:8443/hook', 'url host is not allowed'],
    ['a decimal-spelled loopback address', 'https://2130706433/hook', 'url host is not allowed'],
    ['a hex-spelled loopback address', 'https://0x7f.1/hook', 'url host is not allowed'],
    ['an octal-spelled loopback address', 'https://0177.0.0.1/hook', 'url host is not allowed'],
    ['a short-form loopback address', 'https://127.1/hook', 'url host is not allowed'],
    ['0.0.0.0', 'https://0.0.0.0/hook', 'url host is not allowed'],
    ['0 (read as 0.0.0.0)', 'https://0/hook', 'url host is not allowed'],
    ['a 10/8 private address', 'https://10.0.0.5/hook', 'url host is not allowed'],
    ['a 172.16/12 private address', 'https://172.20.1.1/hook', 'url host is not allowed'],
    ['a 192.168/16 private address', 'https://192.168.1.10/hook', 'url host is not allowed'],
    ['a carrier-grade NAT address', 'https://100.64.0.1/hook', 'url host is not allowed'],
    ['a link-local address', 'https://169.254.10.10/hook', 'url host is not allowed'],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data/', 'url host is not allowed'],
    ['the IPv6 unspecified address', 'https://[::]/hook', 'url host is not allowed'],
    ['the IPv6 loopback address', 'https://[::1]/hook', 'url host is not allowed'],
    ['an IPv4-mapped loopback address', 'https://[::ffff:127.0.0.1]/hook', 'url host is not allowed'],
    ['the AWS IPv6 metadata address', 'https://[fd00:ec2::254]/hook', 'url host is not allowed'],
    ['an IPv6 link-local address', 'https://[fe80::1]/hook', 'url host is not allowed'],
    ['a multicast address', 'https://224.0.0.251/hook', 'url host is not allowed'],
    ['localhost', 'https://localhost/hook', 'url host is not allowed'],
    ['localhost with a trailing dot', 'https://localhost./hook', 'url host is not allowed'],
    ['localhost in capitals', 'https://LOCALHOST:8443/hook', 'url host is not allowed'],
    ['a *.localhost name', 'https://api.localhost/hook', 'url host is not allowed'],
    ['a *.local mDNS name', 'https://printer.local/hook', 'url host is not allowed'],
    ['a *.internal name', 'https://db.internal/hook', 'url host is not allowed'],
    ['the GCP metadata name', 'https://metadata.google.internal/computeMetadata/v1/', 'url host is not allowed'],
    ['the bare metadata name', 'https://metadata/hook', 'url host is not allowed'],
    ['a *.localdomain name', 'https://localhost.localdomain/hook', 'url host is not allowed'],
    ['a *.home.arpa name', 'https://nas.home.arpa/hook', 'url host is not allowed'],
    ['a single-label intranet name', 'https://intranet/hook', 'url host is not allowed'],
    ['a host name with an empty label', 'https://hooks..example.com/hook', 'url host is not a valid host name'],
  ];
  for (const [form, raw, reason] of refused) {
    void it(`refuses ${form} (${raw})`, () => {
      assert.deepEqual(checkWebhookUrl(raw), { ok: false, reason });
    });
  }

  void it('refuses a value that is not a string', () => {
    for (const raw of [undefined, null, 42, { href: 'https://example.com/' }]) {
      assert.deepEqual(checkWebhookUrl(raw), { ok: false, reason: 'url must be a string' });
    }
  });

  void it('refuses a string that is not an absolute URL', () => {
    for (const raw of ['', 'not a url', '/hook', 'example.com/hook', 'https://exa mple.com/']) {
      assert.deepEqual(checkWebhookUrl(raw), { ok: false, reason: 'url must be an absolute URL' }, raw);
    }
  });

  void it('never echoes the host or a resolved address in its reason', () => {
    for (const raw of ['https://10.11.12.13/hook', 'https://[fd00:ec2::254]/', 'https://2130706433/']) {
      const result = checkWebhookUrl(raw);
      assert.equal(result.ok, false);
      if (!result.ok) assert.doesNotMatch(result.reason, /\d+\.\d+|:[0-9a-f]*:/);
    }
  });

  void it('accepts https urls on public names and public IP literals, returning the parsed URL', () => {
    for (const raw of [
      'https://example.com/hook',
      'https://93.184.216.34/x',
      'https://[2606:4700::1111]/',
      'https://hooks.example.org:8443/in?source=events',
    ]) {
      const result = checkWebhookUrl(raw, [], { allowedPorts: [443, 8443] });
      assert.equal(result.ok, true, raw);
      if (result.ok) assert.equal(result.url.href, new URL(raw).href);
    }
  });

  void it('lets a name that may resolve privately through, leaving it to the delivery-time check', () => {
    assert.equal(checkWebhookUrl('https://127.0.0.1.nip.io/hook').ok, true);
  });

  void it('accepts loopback urls when the allow list exempts 127.0.0.0/8, and still refuses other private hosts', () => {
    const allow = parseCidrList(['127.0.0.0/8']);
    assert.equal(checkWebhookUrl('https://127.0.0.1:8443/hook', allow).ok, true);
    assert.equal(checkWebhookUrl('https://[::ffff:127.0.0.1]:8443/hook', allow).ok, true);
    assert.equal(checkWebhookUrl('https://2130706433/hook', allow).ok, true);
    assert.deepEqual(checkWebhookUrl('https://10.0.0.1/hook', allow), { ok: false, reason: 'url host is not allowed' });
    assert.deepEqual(checkWebhookUrl('https://[::1]/hook', allow), { ok: false, reason: 'url host is not allowed' });
    assert.deepEqual(checkWebhookUrl('http://127.0.0.1/hook', allow), { ok: false, reason: 'url must use https' });
  });

  void it('refuses port 0 on an allow-listed address too, which is exempt from the port rule', () => {
    const allow = parseCidrList(['127.0.0.0/8']);
    assert.deepEqual(checkWebhookUrl('https://127.0.0.1:0/hook', allow), {
      ok: false,
      reason: 'url port must be from 1 to 65535',
    });
  });
});

void describe('checkWebhookUrlResolving (at subscription)', () => {
  const answering =
    (...addresses: string[]): AddressLookup =>
    () =>
      Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }) as const));

  void it('refuses a name that resolves to a private, link-local or metadata address, or to a mix with one', async () => {
    for (const addresses of [
      ['10.1.2.3'],
      ['169.254.169.254'],
      ['100.64.0.1'],
      ['fd00::2'],
      ['0.0.0.0'],
      ['93.184.216.34', '10.0.0.1'],
    ]) {
      const check = await checkWebhookUrlResolving('https://hooks.acme.io/in', [], { lookup: answering(...addresses) });
      assert.deepEqual(check, { ok: false, reason: 'url host is not allowed' }, addresses.join(' '));
    }
    assert.equal(
      (await checkWebhookUrlResolving('https://hooks.acme.io/in', [], { lookup: answering('93.184.216.34') })).ok,
      true,
    );
  });

  void it('accepts a name that does not resolve (now, or in time): every delivery resolves it again', async () => {
    const failing: AddressLookup = () => Promise.reject(new Error('ENOTFOUND'));
    const silent: AddressLookup = () => new Promise(() => undefined);
    assert.equal((await checkWebhookUrlResolving('https://nowhere.acme.io/', [], { lookup: failing })).ok, true);
    const check = await checkWebhookUrlResolving('https://slow.acme.io/', [], { lookup: silent, lookupTimeoutMs: 50 });
    assert.equal(check.ok, true);
  });

  void it('never looks up a name reserved for documentation, nor an address literal', async () => {
    const looked: string[] = [];
    const lookup: AddressLookup = (host) => {
      looked.push(host);
      return Promise.resolve([]);
    };
    for (const url of [
      'https://hooks.example.com/',
      'https://example.org/',
      'https://a.example/',
      'https://b.test/',
      'https://93.184.216.34/',
    ]) {
      assert.equal((await checkWebhookUrlResolving(url, [], { lookup })).ok, true, url);
    }
    assert.deepEqual(looked, []);
  });

  void it('exempts from the port rule a name that resolves only into WEBHOOK_ALLOW_PRIVATE_CIDRS, as its addresses are', async () => {
    const allow = parseCidrList(['127.0.0.0/8']);
    const toLoopback = { lookup: answering('127.0.0.1'), allowedPorts: [443] };
    assert.equal((await checkWebhookUrlResolving('https://rig.acme.io:4443/', allow, toLoopback)).ok, true);
    const toPublic = { lookup: answering('93.184.216.34'), allowedPorts: [443] };
    assert.deepEqual(await checkWebhookUrlResolving('https://rig.acme.io:4443/', allow, toPublic), {
      ok: false,
      reason: 'url port must be 443',
    });
  });
});

void describe('resolvePublicAddress', () => {
  const fixed =
    (...answers: Array<[string, 4 | 6]>): AddressLookup =>
    async () =>
      answers.map(([address, family]) => ({ address, family }));
  const noDns: AddressLookup = async (hostname) => {
    throw new Error(`unexpected lookup of ${hostname}`);
  };

  void it('returns the first resolved address when every address is public', async () => {
    const calls: string[] = [];
    const lookup: AddressLookup = async (hostname) => {
      calls.push(hostname);
      return [
        { address: '2606:4700::1111', family: 6 },
        { address: '93.184.216.34', family: 4 },
      ];
    };
    assert.deepEqual(await resolvePublicAddress('hooks.example.com', [], lookup), {
      ok: true,
      address: '2606:4700::1111',
      family: 6,
    });
    assert.deepEqual(calls, ['hooks.example.com']);
  });

  void it('refuses the host when any resolved address is not public, wherever it appears in the answer', async () => {
    for (const lookup of [
      fixed(['93.184.216.34', 4], ['10.0.0.1', 4]),
      fixed(['127.0.0.1', 4], ['93.184.216.34', 4]),
      fixed(['2606:4700::1111', 6], ['::ffff:169.254.169.254', 6]),
      fixed(['93.184.216.34', 4], ['fe80::1%eth0', 6]),
    ]) {
      assert.deepEqual(await resolvePublicAddress('rebind.example.com', [], lookup), {
        ok: false,
        reason: 'blocked_host',
      });
    }
  });

  void it('refuses the host when the resolver returns something that is not an address', async () => {
    assert.deepEqual(await resolvePublicAddress('odd.example.com', [], fixed(['not-an-ip', 4])), {
      ok: false,
      reason: 'blocked_host',
    });
  });

  void it('reports a failed lookup or an empty answer as network_error, saying why', async () => {
    const failing: AddressLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const gone = await resolvePublicAddress('gone.example.com', [], failing);
    assert.deepEqual([gone.ok, gone.ok ? null : gone.reason], [false, 'network_error']);
    assert.equal((gone as { error: { code: string } }).error.code, 'ENOTFOUND');
    const empty = await resolvePublicAddress('empty.example.com', [], fixed());
    assert.deepEqual([empty.ok, empty.ok ? null : empty.reason], [false, 'network_error']);
    assert.equal((empty as { error: Error }).error.message, 'no address for empty.example.com');
  });

  void it('resolves an IP literal to itself without a lookup', async () => {
    assert.deepEqual(await resolvePublicAddress('93.184.216.34', [], noDns), {
      ok: true,
      address: '93.184.216.34',
      family: 4,
    });
    assert.deepEqual(await resolvePublicAddress('[2606:4700::1111]', [], noDns), {
      ok: true,
      address: '2606:4700::1111',
      family: 6,
    });
  });

  void it('refuses a non-public IP literal without a lookup', async () => {
    for (const host of ['127.0.0.1', '[::1]', '169.254.169.254', '[fd00:ec2::254]']) {
      assert.deepEqual(await resolvePublicAddress(host, [], noDns), { ok: false, reason: 'blocked_host' }, host);
    }
  });

  void it('refuses an empty host name without asking the resolver', async () => {
    assert.deepEqual(await resolvePublicAddress('', [], fixed(['93.184.216.34', 4])), {
      ok: false,
      reason: 'blocked_host',
    });
  });

  void it('takes the family from the address, not from what the lookup claimed', async () => {
    assert.deepEqual(await resolvePublicAddress('mislabelled.example.com', [], fixed(['2606:4700::1111', 4])), {
      ok: true,
      address: '2606:4700::1111',
      family: 6,
    });
  });

  void it('delivers to an allow-listed private address', async () => {
    const allow = parseCidrList(['127.0.0.0/8']);
    assert.deepEqual(await resolvePublicAddress('receiver.test', allow, fixed(['127.0.0.1', 4])), {
      ok: true,
      address: '127.0.0.1',
      family: 4,
    });
    assert.deepEqual(await resolvePublicAddress('receiver.test', allow, fixed(['127.0.0.1', 4], ['::1', 6])), {
      ok: false,
      reason: 'blocked_host',
    });
  });

  void it('refuses localhost through the system resolver by default', async () => {
    assert.deepEqual(await resolvePublicAddress('localhost', []), { ok: false, reason: 'blocked_host' });
  });
});

void describe('SSRF gaps: every form of a private address is refused', () => {
  void it('refuses the IPv4-translated form ::ffff:0:0:0/96 (https://[::ffff:0:127.0.0.1]/) at subscription and delivery', async () => {
    assert.deepEqual(checkWebhookUrl('https://[::ffff:0:127.0.0.1]/'), {
      ok: false,
      reason: 'url host is not allowed',
    });
    assert.equal(isPublicAddress('::ffff:0:7f00:1'), false);
    assert.equal(isPublicAddress('::ffff:0:808:808'), false);
    assert.deepEqual(
      await resolvePublicAddress('translated.example.com', [], async () => [{ address: '::ffff:0:7f00:1', family: 6 }]),
      { ok: false, reason: 'blocked_host' },
    );
  });

  void it('refuses Teredo (2001::/32) and the rest of 2001::/23', () => {
    for (const address of ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:1::1', '2001:1ff::1']) {
      assert.equal(isPublicAddress(address), false, address);
      assert.deepEqual(checkWebhookUrl(`https://[${address}]/`), { ok: false, reason: 'url host is not allowed' });
    }
    assert.equal(isPublicAddress('2001:200::1'), true);
  });

  void it('accepts only port 443 unless told otherwise', () => {
    assert.deepEqual(checkWebhookUrl('https://hooks.example.com:8443/'), { ok: false, reason: 'url port must be 443' });
    assert.deepEqual(checkWebhookUrl('https://93.184.216.34:22/'), { ok: false, reason: 'url port must be 443' });
    assert.equal(checkWebhookUrl('https://hooks.example.com:443/').ok, true);
    assert.equal(checkWebhookUrl('https://hooks.example.com:8443/', [], { allowedPorts: [443, 8443] }).ok, true);
    assert.deepEqual(checkWebhookUrl('https://hooks.example.com:9000/', [], { allowedPorts: [443, 8443] }), {
      ok: false,
      reason: 'url port must be 443 or 8443',
    });
  });

  void it('exempts addresses in the allow list from the port rule, and nothing else', () => {
    const allow = parseCidrList(['127.0.0.0/8']);
    assert.equal(isPortAllowed(8443, '127.0.0.1', allow), true);
    assert.equal(isPortAllowed(8443, '93.184.216.34', allow), false);
    assert.equal(isPortAllowed(8443, null, allow), false);
    assert.equal(isPortAllowed(443, '93.184.216.34', []), true);
  });

  void it('returns the normalised URL (WHATWG href), not the raw text', () => {
    const result = checkWebhookUrl('  HTTPS://Hooks.Example.COM:443/a/../in?x=1  ');
    assert.equal(result.ok, true);
    if (result.ok) assert.equal(result.url.href, 'https://hooks.example.com/in?x=1');
  });

  void it('judges special ranges through ipaddr.js: only unicast is public', () => {
    for (const address of ['192.88.99.1', '192.175.48.1', '2001:2::1', '2001:20::1', '3fff::1', '5f00::1']) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });
});
