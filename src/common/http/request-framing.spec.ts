import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { framingRefusal } from './request-framing';

/** A request as Node's parser hands it over: its version and its header lines as they came. */
function request(httpVersion: '1.0' | '1.1', lines: Array<[string, string]>): IncomingMessage {
  const headers: Record<string, string> = {};
  // Node keeps the first Host and drops the others; other fields are joined, which these cases do not need.
  for (const [name, value] of lines) headers[name.toLowerCase()] ??= value;
  return { httpVersion, headers, rawHeaders: lines.flat() } as unknown as IncomingMessage;
}

describe('a request’s framing and Host (RFC 9112)', () => {
  it('lets an ordinary request through, an HTTP/1.0 one without Host too, and an empty Host', () => {
    assert.equal(framingRefusal(request('1.1', [['Host', 'api.example.com:3000']])), null);
    assert.equal(framingRefusal(request('1.1', [['host', '[::1]:3000']])), null);
    assert.equal(framingRefusal(request('1.0', [])), null);
    assert.equal(framingRefusal(request('1.1', [['Host', '']])), null);
    assert.equal(
      framingRefusal(
        request('1.1', [
          ['Host', 'x'],
          ['Transfer-Encoding', 'chunked'],
        ]),
      ),
      null,
    );
  });

  it('refuses an HTTP/1.1 request without Host', () => {
    assert.match(framingRefusal(request('1.1', [])) ?? '', /must carry a Host header/);
  });

  it('refuses several Host fields, and a Host that is not a host', () => {
    assert.match(
      framingRefusal(
        request('1.1', [
          ['Host', 'a'],
          ['HOST', 'b'],
        ]),
      ) ?? '',
      /one Host header, not several/,
    );
    assert.match(framingRefusal(request('1.1', [['Host', 'a b']])) ?? '', /must be a host/);
    assert.match(framingRefusal(request('1.1', [['Host', 'a/b']])) ?? '', /must be a host/);
  });

  it('refuses Transfer-Encoding on an HTTP/1.0 request, whose framing cannot be trusted', () => {
    const refusal = framingRefusal(
      request('1.0', [
        ['Host', 'x'],
        ['Transfer-Encoding', 'chunked'],
      ]),
    );
    assert.match(refusal ?? '', /HTTP\/1\.0 request cannot carry Transfer-Encoding/);
  });
});
