import {
  CheckResult,
  InvalidField,
  expectNullableString,
  expectPlainObject,
  expectString,
  ownValue,
  toResult,
} from './field-checks';

export const MEETING_PROVIDER_CODES = ['zoom', 'google_meet', 'microsoft_teams'] as const;
export type MeetingProvider = (typeof MEETING_PROVIDER_CODES)[number];

export interface MeetingHostRule {
  /** Human name, for messages and the docs. */
  readonly name: string;
  /** Host names accepted only exactly as written. */
  readonly exactHosts: readonly string[];
  /** Domains accepted themselves and with any subdomain (`us02web.zoom.us`). */
  readonly domainsWithSubdomains: readonly string[];
}

/**
 * Only hosts the provider itself owns. Zoom puts each account on a regional
 * subdomain (`us02web.zoom.us`), and Zoom for Government lives on
 * `zoomgov.com`, so those are whole domains. Google Meet and Teams issue
 * links on one fixed host each, so their sibling subdomains (other Google or
 * Microsoft services, some of which host user content) are not accepted.
 */
export const MEETING_PROVIDERS: Readonly<Record<MeetingProvider, MeetingHostRule>> = {
  zoom: { name: 'Zoom', exactHosts: [], domainsWithSubdomains: ['zoom.us', 'zoom.com', 'zoomgov.com'] },
  google_meet: { name: 'Google Meet', exactHosts: ['meet.google.com'], domainsWithSubdomains: [] },
  microsoft_teams: {
    name: 'Microsoft Teams',
    exactHosts: ['teams.microsoft.com', 'teams.live.com'],
    domainsWithSubdomains: [],
  },
};

export interface OnlineMeeting {
  provider: MeetingProvider;
  /** The URL as the WHATWG parser serialised it, so what is stored is exactly what was checked. */
  url: string;
  label: string | null;
}

const MAX_URL_LENGTH = 2_048;
const MAX_LABEL_LENGTH = 200;

/**
 * `hostname` comes from the WHATWG parser, which lowercases it and decodes
 * tricks like `%2e` or an ideographic full stop, so a plain comparison is
 * exact. Subdomains match only on a dot boundary: `evilzoom.us` and
 * `zoom.us.evil.com` both fail.
 */
export function isProviderHost(provider: MeetingProvider, hostname: string): boolean {
  const rule = MEETING_PROVIDERS[provider];
  if (rule.exactHosts.includes(hostname)) return true;
  return rule.domainsWithSubdomains.some((domain) => hostname === domain || hostname.endsWith(`.${domain}`));
}

function expectProvider(value: unknown, field: string): MeetingProvider {
  if (typeof value !== 'string' || !(MEETING_PROVIDER_CODES as readonly string[]).includes(value)) {
    throw new InvalidField(`${field} must be one of ${MEETING_PROVIDER_CODES.join(', ')}`);
  }
  return value as MeetingProvider;
}

// Messages never echo the submitted URL: a rejected link is not stored, and
// not reflected either.
function expectMeetingUrl(value: unknown, field: string, provider: MeetingProvider): string {
  const text = expectString(value, field, MAX_URL_LENGTH);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidField(`${field} must be an absolute URL`);
  }
  if (url.protocol !== 'https:') throw new InvalidField(`${field} must use https`);
  if (url.username !== '' || url.password !== '') throw new InvalidField(`${field} must not contain credentials`);
  // The parser drops an explicit :443, so any port left here is a non-default one.
  if (url.port !== '') throw new InvalidField(`${field} must not name a port`);
  if (!isProviderHost(provider, url.hostname)) {
    const rule = MEETING_PROVIDERS[provider];
    const hosts = [...rule.exactHosts, ...rule.domainsWithSubdomains.map((domain) => `${domain} or *.${domain}`)];
    throw new InvalidField(`${field} must be on a ${rule.name} host (${hosts.join(', ')})`);
  }
  return url.href;
}

export function parseOnlineMeetingValue(value: unknown, field = 'onlineMeeting'): OnlineMeeting {
  const raw = expectPlainObject(value, field);
  // Provider first: the URL rule depends on it.
  const provider = expectProvider(ownValue(raw, 'provider'), `${field}.provider`);
  const url = expectMeetingUrl(ownValue(raw, 'url'), `${field}.url`, provider);
  const rawLabel = ownValue(raw, 'label');
  const label = rawLabel === undefined ? null : expectNullableString(rawLabel, `${field}.label`, MAX_LABEL_LENGTH);
  return { provider, url, label };
}

/** Validates an `onlineMeeting` object (not `null`: clearing is the caller's concern); unknown keys are dropped. */
export function parseOnlineMeeting(value: unknown, field = 'onlineMeeting'): CheckResult<OnlineMeeting> {
  return toResult(() => parseOnlineMeetingValue(value, field));
}
