import type { MintedPortalLink } from '../portal/portal-links.service';

/**
 * A portal link made from an account's page, as that page shows it once:
 * the link with what it allows and until when, so that each of several
 * links made before the page was shown is labelled as its own.
 */
export interface MadePortalLink {
  url: string;
  /** null for a link kept before links carried what they allow (its page says nothing of it). */
  readOnly: boolean | null;
  expiresAt: string | null;
}

/** What the session keeps (sealed) for the account page. */
export function madePortalLinkText(link: MintedPortalLink): string {
  return JSON.stringify({ url: link.url, readOnly: link.readOnly, expiresAt: link.expiresAt });
}

/** The kept text read back; a bare URL is a link an earlier version kept. */
export function madePortalLinkOf(text: string): MadePortalLink {
  try {
    const kept = JSON.parse(text) as Partial<Record<keyof MadePortalLink, unknown>>;
    if (typeof kept.url === 'string') {
      return {
        url: kept.url,
        readOnly: typeof kept.readOnly === 'boolean' ? kept.readOnly : null,
        expiresAt: typeof kept.expiresAt === 'string' ? kept.expiresAt : null,
      };
    }
  } catch {
    // Not JSON: the bare URL an earlier version kept.
  }
  return { url: text, readOnly: null, expiresAt: null };
}
