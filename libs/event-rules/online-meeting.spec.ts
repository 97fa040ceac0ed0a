import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MEETING_PROVIDERS,
  MEETING_PROVIDER_CODES,
  OnlineMeeting,
  isProviderHost,
  parseOnlineMeeting,
} from './online-meeting';

function accept(value: unknown): OnlineMeeting {
  const result = parseOnlineMeeting(value);
  if (!result.ok) assert.fail(`expected the meeting to be accepted, got: ${result.message}`);
  return result.value;
}

function refusedNaming(value: unknown, field: string): string {
  const result = parseOnlineMeeting(value);
  if (result.ok) assert.fail(`expected the meeting to be refused, got ${JSON.stringify(result.value)}`);
  assert.ok(result.message.includes(field), `message "${result.message}" should name ${field}`);
  return result.message;
}

void describe('parseOnlineMeeting', () => {
  void it("accepts each provider's own hosts", () => {
    const valid: [string, string][] = [
      ['zoom', 'https://zoom.us/j/123456789?pwd=abc'],
      ['zoom', 'https://us02web.zoom.us/j/123456789'],
      ['zoom', 'https://zoom.com/j/123'],
      ['zoom', 'https://events.zoom.com/ev/abc'],
      ['google_meet', 'https://meet.google.com/abc-defg-hij'],
      ['microsoft_teams', 'https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc'],
      ['microsoft_teams', 'https://teams.live.com/meet/9312345678'],
    ];
    for (const [provider, url] of valid) assert.equal(accept({ provider, url }).url, url);
  });

  void it('refuses an onlineMeeting url on a look-alike host', () => {
    const lookAlikes: [string, string][] = [
      ['zoom', 'https://zoom.us.evil.com/j/1'],
      ['zoom', 'https://evilzoom.us/j/1'],
      ['zoom', 'https://zoom.usa/j/1'],
      ['zoom', 'https://zoom.us./j/1'],
      ['zoom', 'https://zoom.us\u3002evil.com/j/1'],
      ['google_meet', 'https://meet.google.com.evil.com/abc'],
      ['google_meet', 'https://evilmeet.google.com/abc'],
      ['google_meet', 'https://meet-google.com/abc'],
      ['microsoft_teams', 'https://teams.microsoft.com.evil.com/l/1'],
      ['microsoft_teams', 'https://evilteams.live.com/meet/1'],
    ];
    for (const [provider, url] of lookAlikes) refusedNaming({ provider, url }, 'onlineMeeting.url');
  });

  void it('refuses subdomains where the provider issues links on one host only', () => {
    refusedNaming({ provider: 'google_meet', url: 'https://sites.google.com/meet' }, 'onlineMeeting.url');
    refusedNaming({ provider: 'google_meet', url: 'https://x.meet.google.com/abc' }, 'onlineMeeting.url');
    refusedNaming({ provider: 'microsoft_teams', url: 'https://x.teams.microsoft.com/l/1' }, 'onlineMeeting.url');
  });

  void it('refuses a host that belongs to another provider than the one named', () => {
    refusedNaming({ provider: 'zoom', url: 'https://meet.google.com/abc-defg-hij' }, 'onlineMeeting.url');
    refusedNaming({ provider: 'google_meet', url: 'https://zoom.us/j/1' }, 'onlineMeeting.url');
  });

  void it('refuses userinfo and backslash tricks that put the real host elsewhere', () => {
    refusedNaming({ provider: 'zoom', url: 'https://zoom.us@evil.com/j/1' }, 'onlineMeeting.url');
    refusedNaming({ provider: 'zoom', url: 'https://evil.com\\@zoom.us/j/1' }, 'onlineMeeting.url');
    refusedNaming({ provider: 'zoom', url: 'https://evil.com#@zoom.us' }, 'onlineMeeting.url');
  });

  void it('refuses any scheme other than https', () => {
    for (const url of [
      'http://zoom.us/j/1',
      'javascript://zoom.us/%0aalert(1)',
      'ftp://zoom.us/j/1',
      'wss://zoom.us/',
    ]) {
      refusedNaming({ provider: 'zoom', url }, 'onlineMeeting.url');
    }
  });

  void it('refuses credentials in the url', () => {
    refusedNaming({ provider: 'zoom', url: 'https://user:pass@zoom.us/j/1' }, 'onlineMeeting.url');
    refusedNaming({ provider: 'zoom', url: 'https://user@zoom.us/j/1' }, 'onlineMeeting.url');
  });

  void it('refuses an explicit non-443 port and normalises :443 away', () => {
    refusedNaming({ provider: 'zoom', url: 'https://zoom.us:8443/j/1' }, 'onlineMeeting.url');
    assert.equal(accept({ provider: 'zoom', url: 'https://zoom.us:443/j/1' }).url, 'https://zoom.us/j/1');
  });

  void it("stores the parser's serialisation, which is what was checked", () => {
    assert.equal(accept({ provider: 'zoom', url: 'https://US02WEB.Zoom.US/j/1' }).url, 'https://us02web.zoom.us/j/1');
  });

  void it('refuses a url that does not parse or is not a string', () => {
    refusedNaming({ provider: 'zoom', url: 'zoom.us/j/1' }, 'onlineMeeting.url');
    refusedNaming({ provider: 'zoom', url: 42 }, 'onlineMeeting.url');
    refusedNaming({ provider: 'zoom' }, 'onlineMeeting.url');
  });

  void it('never echoes the refused url in the message', () => {
    const message = refusedNaming({ provider: 'zoom', url: 'https://phish.example/steal' }, 'onlineMeeting.url');
    assert.ok(!message.includes('phish.example'));
  });

  void it('refuses an unknown or missing provider', () => {
    refusedNaming({ provider: 'webex', url: 'https://zoom.us/j/1' }, 'onlineMeeting.provider');
    refusedNaming({ provider: 'Zoom', url: 'https://zoom.us/j/1' }, 'onlineMeeting.provider');
    refusedNaming({ provider: 'toString', url: 'https://zoom.us/j/1' }, 'onlineMeeting.provider');
    refusedNaming({ url: 'https://zoom.us/j/1' }, 'onlineMeeting.provider');
  });

  void it('defaults the label to null and caps it at 200 characters', () => {
    assert.equal(accept({ provider: 'zoom', url: 'https://zoom.us/j/1' }).label, null);
    assert.equal(accept({ provider: 'zoom', url: 'https://zoom.us/j/1', label: null }).label, null);
    assert.equal(accept({ provider: 'zoom', url: 'https://zoom.us/j/1', label: 'x'.repeat(200) }).label?.length, 200);
    refusedNaming({ provider: 'zoom', url: 'https://zoom.us/j/1', label: 'x'.repeat(201) }, 'onlineMeeting.label');
    refusedNaming({ provider: 'zoom', url: 'https://zoom.us/j/1', label: 7 }, 'onlineMeeting.label');
  });

  void it('drops unknown keys', () => {
    assert.deepEqual(accept({ provider: 'google_meet', url: 'https://meet.google.com/abc', passcode: '1234' }), {
      provider: 'google_meet',
      url: 'https://meet.google.com/abc',
      label: null,
    });
  });

  void it('refuses a value that is not an object', () => {
    refusedNaming('https://zoom.us/j/1', 'onlineMeeting');
  });
});

void describe('MEETING_PROVIDERS', () => {
  void it('lists exactly three providers, each with at least one host', () => {
    assert.deepEqual(Object.keys(MEETING_PROVIDERS).sort(), [...MEETING_PROVIDER_CODES].sort());
    assert.equal(MEETING_PROVIDER_CODES.length, 3);
    for (const code of MEETING_PROVIDER_CODES) {
      const rule = MEETING_PROVIDERS[code];
      assert.ok(rule.exactHosts.length + rule.domainsWithSubdomains.length > 0);
    }
  });

  void it('matches subdomains only on a dot boundary', () => {
    assert.equal(isProviderHost('zoom', 'a.b.zoom.us'), true);
    assert.equal(isProviderHost('zoom', 'notzoom.us'), false);
    assert.equal(isProviderHost('zoom', 'zoom.us.example'), false);
  });
});
