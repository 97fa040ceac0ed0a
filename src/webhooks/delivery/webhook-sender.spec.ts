import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { parseCidrList, type AddressLookup } from '../../../libs/webhooks';
import { startHttpsReceiver, type HttpsReceiver } from '../../../test/support/https-receiver';
import { excerptOf, WebhookSender } from './webhook-sender';

// The receiver's certificate is trusted through NODE_EXTRA_CA_CERTS, which the test runner sets.
const loopback = parseCidrList(['127.0.0.0/8']);
const body = Buffer.from('{"id":"d1","type":"order.confirmed"}');

void describe('WebhookSender', () => {
  // A receiver of its own per test: a request one test abandoned (its deadline passed, its caller aborted) may
  // still be read by its receiver afterwards, and must not be counted by the next test.
  let receiver: HttpsReceiver;
  const sender = new WebhookSender();

  beforeEach(async () => {
    receiver = await startHttpsReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });
  after(() => {
    sender.destroy();
  });

  const send = (path: string, options: Partial<Parameters<WebhookSender['send']>[1]> = {}) =>
    sender.send(
      { url: `${receiver.origin}${path}`, body, headers: { 'Content-Type': 'application/json', 'Service-Event': 'x' } },
      { timeoutMs: 1_000, allowedPrivate: loopback, ...options },
    );

  void it('POSTs the exact bytes with the given headers and reports the status', async () => {
    receiver.reply(() => ({ status: 202 }));
    const result = await send('/in?x=1');
    assert.equal(result.outcome, 202);
    assert.equal(result.aborted, false);
    const request = receiver.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/in?x=1');
    assert.ok(request.rawBody.equals(body));
    assert.equal(request.headers['service-event'], 'x');
    assert.equal(request.headers['content-length'], String(body.length));
  });

  void it('reports a redirect as its status without following it', async () => {
    const before = receiver.requests.length;
    receiver.reply(() => ({ status: 307, headers: { location: `${receiver.origin}/elsewhere` } }));
    assert.equal((await send('/in')).outcome, 307);
    assert.equal(receiver.requests.length, before + 1);
  });

  void it('hands back Retry-After and stops reading a long body at 4 KiB', async () => {
    receiver.reply(() => ({ status: 503, headers: { 'retry-after': '120' }, body: 'x'.repeat(1_000_000) }));
    const result = await send('/in');
    assert.equal(result.outcome, 503);
    assert.equal(result.retryAfter, '120');
  });

  void it('keeps the status and the first KiB of the body as text, invalid UTF-8 and NUL replaced', async () => {
    const bytes = Buffer.concat([Buffer.from('ok'), Buffer.from([0xff, 0x00]), Buffer.alloc(2000, 0x61)]);
    assert.equal(excerptOf(bytes.subarray(0, 6)), 'ok\uFFFD\uFFFDaa');
    // A character cut at the limit is replaced, never stored half.
    assert.equal(excerptOf(Buffer.from('aé').subarray(0, 2)), 'a\uFFFD');
    receiver.reply(() => ({ status: 418, body: 'y'.repeat(3000) }));
    const result = await send('/in');
    assert.equal(result.httpStatus, 418);
    assert.equal(result.responseExcerpt, 'y'.repeat(1024));
    receiver.reply(() => ({ status: 204 }));
    const empty = await send('/in');
    assert.deepEqual([empty.httpStatus, empty.responseExcerpt], [204, '']);
  });

  void it('takes a status whose body stalls as the answer within a second of it, keeping what was read, not at the deadline', async () => {
    receiver.reply(() => ({ status: 200, body: 'ok so far', stallBody: true }));
    const result = await send('/in', { timeoutMs: 30_000 });
    assert.equal(result.outcome, 200);
    assert.equal(result.responseExcerpt, 'ok so far');
    // The grace is BODY_GRACE_MS (1 s); the deadline, 30 s, is never reached.
    assert.ok(result.durationMs >= 900 && result.durationMs < 10_000, `${result.durationMs} ms`);
  });

  void it('gives up at the deadline with timeout', async () => {
    receiver.reply(() => ({ status: 200, delayMs: 500 }));
    const result = await send('/slow', { timeoutMs: 100 });
    assert.equal(result.outcome, 'timeout');
    assert.deepEqual([result.httpStatus, result.responseExcerpt], [null, null]);
    assert.ok(result.durationMs >= 90 && result.durationMs < 450, `${result.durationMs} ms`);
  });

  void it('refuses an address outside the allow-list as blocked_host without connecting', async () => {
    const before = receiver.requests.length;
    receiver.reply(() => ({ status: 200 }));
    assert.equal((await send('/in', { allowedPrivate: [] })).outcome, 'blocked_host');
    assert.equal(receiver.requests.length, before);
  });

  void it('resolves a name once, refuses it when any answer is private, and never looks it up again', async () => {
    const calls: string[] = [];
    const rebinding: AddressLookup = async (hostname) => {
      calls.push(hostname);
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ];
    };
    const port = new URL(receiver.origin).port;
    const result = await sender.send(
      { url: `https://hooks.example.test:${port}/in`, body, headers: {} },
      { timeoutMs: 1_000, allowedPrivate: loopback, lookup: rebinding },
    );
    assert.equal(result.outcome, 'blocked_host');
    assert.deepEqual(calls, ['hooks.example.test']);
  });

  void it('connects to the checked address but verifies TLS against the host name', async () => {
    // The lookup says 127.0.0.1, where the receiver is; its certificate names 127.0.0.1, not this host,
    // so the handshake must fail: the name, not the pinned address, is what TLS checks.
    const calls: string[] = [];
    const pinned: AddressLookup = async (hostname) => {
      calls.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const before = receiver.requests.length;
    const port = new URL(receiver.origin).port;
    const result = await sender.send(
      { url: `https://hooks.example.test:${port}/in`, body, headers: {} },
      { timeoutMs: 1_000, allowedPrivate: loopback, lookup: pinned },
    );
    assert.equal(result.outcome, 'network_error');
    assert.deepEqual(calls, ['hooks.example.test']);
    assert.equal(receiver.requests.length, before);
  });

  void it('says for the operators’ log what a network error was: a certificate for another name, a refused connection', async () => {
    const port = new URL(receiver.origin).port;
    const wrongName = await sender.send(
      { url: `https://hooks.example.test:${port}/in`, body, headers: {} },
      { timeoutMs: 1_000, allowedPrivate: loopback, lookup: async () => [{ address: '127.0.0.1', family: 4 }] },
    );
    assert.equal(wrongName.outcome, 'network_error');
    assert.match(wrongName.networkError ?? '', /^ERR_TLS_CERT_ALTNAME_INVALID: .*hooks\.example\.test/);
    const refused = await sender.send(
      { url: 'https://127.0.0.1:1/in', body, headers: {} },
      { timeoutMs: 1_000, allowedPrivate: loopback },
    );
    assert.match(refused.networkError ?? '', /^ECONNREFUSED: /);
    const unresolved = await sender.send(
      { url: 'https://hooks.example.invalid/in', body, headers: {} },
      {
        timeoutMs: 1_000,
        allowedPrivate: loopback,
        lookup: async () => {
          throw Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.invalid'), { code: 'ENOTFOUND' });
        },
      },
    );
    assert.deepEqual(
      [unresolved.outcome, unresolved.networkError],
      ['network_error', 'ENOTFOUND: getaddrinfo ENOTFOUND hooks.example.invalid'],
    );
    receiver.reply(() => ({ status: 503 }));
    assert.equal((await send('/in')).networkError, null, 'an answer is no network error');
  });

  void it('reports a refused connection as network_error', async () => {
    const result = await sender.send(
      { url: 'https://127.0.0.1:1/in', body, headers: {} },
      { timeoutMs: 1_000, allowedPrivate: loopback },
    );
    assert.equal(result.outcome, 'network_error');
  });

  void it('gives up at the deadline with timeout while the TLS handshake never completes, not at undici’s own 10 s', async () => {
    // Takes the connection and never answers the ClientHello.
    const silent = createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = performance.now();
      const result = await sender.send(
        { url: `https://127.0.0.1:${port}/in`, body, headers: {} },
        { timeoutMs: 300, allowedPrivate: loopback, allowedPorts: [port] },
      );
      const tookMs = performance.now() - started;
      assert.equal(result.outcome, 'timeout');
      assert.ok(tookMs < 2_000, `took ${Math.round(tookMs)} ms`);
    } finally {
      silent.close();
    }
  });

  void it('stops when the caller aborts and says so', async () => {
    receiver.reply(() => 'hang');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const result = await send('/hang', { signal: controller.signal, timeoutMs: 5_000 });
    assert.equal(result.aborted, true);
  });

  void it('refuses at delivery a port outside WEBHOOK_ALLOWED_PORTS on a public address, without connecting', async () => {
    const before = receiver.requests.length;
    // A name that resolves to a public address: nothing exempts it from the port rule.
    const publicAnswer: AddressLookup = async () => [{ address: '93.184.216.34', family: 4 }];
    const result = await sender.send(
      { url: 'https://hooks.example.com:8443/in', body, headers: {} },
      { timeoutMs: 1_000, allowedPrivate: [], allowedPorts: [443], lookup: publicAnswer },
    );
    assert.equal(result.outcome, 'blocked_host');
    assert.equal(receiver.requests.length, before);
  });

  void it('refuses at delivery a host resolving to the IPv4-translated form of loopback', async () => {
    const translated: AddressLookup = async () => [{ address: '::ffff:0:7f00:1', family: 6 }];
    const result = await sender.send(
      { url: 'https://hooks.example.com/in', body, headers: {} },
      { timeoutMs: 1_000, allowedPrivate: [], lookup: translated },
    );
    assert.equal(result.outcome, 'blocked_host');
  });

  it("starts the receiver's timeout once the delivery client is loaded: a slow first load is never charged to the receiver", async () => {
    const loadMs = 1_500;
    const slowFirstLoad = new WebhookSender(async () => {
      await new Promise((resolve) => setTimeout(resolve, loadMs));
      return import('undici');
    });
    try {
      receiver.reply(() => ({ status: 204 }));
      const result = await slowFirstLoad.send(
        { url: `${receiver.origin}/cold`, body, headers: {} },
        { timeoutMs: 1_000, allowedPrivate: loopback },
      );
      assert.equal(result.outcome, 204);
      assert.ok(result.durationMs < loadMs, `the attempt took ${result.durationMs} ms: the load was counted`);
    } finally {
      slowFirstLoad.destroy();
    }
  });

  it('loads the delivery client (undici) with the first attempt, so an instance that never delivers never holds it', async () => {
    // A fresh process: this one's module cache already holds whatever the other tests loaded.
    const script = `
      const sender = require(${JSON.stringify(require.resolve('./webhook-sender'))});
      require(${JSON.stringify(require.resolve('./webhook-delivery.worker'))});
      const held = () => Object.keys(require.cache).some((path) => path.includes('/node_modules/undici/'));
      const before = held();
      sender.loadDeliveryClient().then(() => console.log(JSON.stringify({ before, after: held() })));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script]);
    assert.deepEqual(JSON.parse(stdout), { before: false, after: true });
  });
});
