import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ScheduledJobs } from '../database/jobs/scheduled-jobs';
import { UnitOfWork } from '../database/unit-of-work';
import { OrganisersService } from '../identity/organisers.service';
import { VenuesService } from '../venues/venues.service';
import { PortalAccessRepository, type LinkRefusal, type PortalAccount } from './portal-access.repository';
import { PORTAL_SESSION_ABSOLUTE_SECONDS } from './portal-lifetimes';

export const DEFAULT_LINK_TTL_SECONDS = 900;
export const MIN_LINK_TTL_SECONDS = 60;
export const MAX_LINK_TTL_SECONDS = 3600;

export interface MintedPortalLink {
  url: string;
  expiresAt: string;
  readOnly: boolean;
}

export interface OpenedPortalLink {
  /** The session cookie's value (only its hash is stored). */
  sessionToken: string;
}

/** A link token or session cookie, as stored: its SHA-256 in hex. */
export function tokenHashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 256 random bits, URL-safe: unguessable, and safe in a fragment and a cookie. */
function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Links into the webhook portal (internal-api.md, "Webhook portal"): minted
 * on the internal side, opened at most once, each opening exchanging the
 * link's token for a session. The token travels in the URL's fragment, which
 * browsers never send, so it never appears in a request line or a log.
 */
export const PORTAL_PURGE_JOB = 'portal-access-purge';
const PORTAL_PURGE_EVERY_MS = 10 * 60 * 1000;

@Injectable()
export class PortalLinksService implements OnModuleInit {
  constructor(
    private readonly access: PortalAccessRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly organisers: OrganisersService,
    private readonly venues: VenuesService,
    private readonly jobs: ScheduledJobs,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Dead links and sessions go on one instance at a time, besides the small purge each mint does. */
  onModuleInit(): void {
    this.jobs.every(PORTAL_PURGE_JOB, PORTAL_PURGE_EVERY_MS, () =>
      this.access.purgeDead(PORTAL_SESSION_ABSOLUTE_SECONDS),
    );
  }

  /** `accountType`, when given, is the kind the caller means: an account of the other kind is then not found. */
  async mint(input: {
    accountId: unknown;
    accountType?: PortalAccount['type'];
    readOnly?: unknown;
    ttlSeconds?: unknown;
  }): Promise<MintedPortalLink> {
    const readOnly = input.readOnly === undefined ? false : input.readOnly;
    if (typeof readOnly !== 'boolean') throw DomainError.invalidArgument('readOnly must be true or false.');
    const ttlSeconds = input.ttlSeconds === undefined ? DEFAULT_LINK_TTL_SECONDS : input.ttlSeconds;
    if (
      typeof ttlSeconds !== 'number' ||
      !Number.isInteger(ttlSeconds) ||
      ttlSeconds < MIN_LINK_TTL_SECONDS ||
      ttlSeconds > MAX_LINK_TTL_SECONDS
    ) {
      throw DomainError.invalidArgument(
        `ttlSeconds must be a whole number from ${MIN_LINK_TTL_SECONDS} to ${MAX_LINK_TTL_SECONDS}.`,
      );
    }
    const account = await this.account(input.accountId);
    if (input.accountType !== undefined && account.type !== input.accountType) throw DomainError.notFound('Account');
    const portalUrl = this.config.portal.url;
    if (portalUrl === null) {
      throw new DomainError(
        ErrorCode.Conflict,
        'This instance (SERVICE_ROLE=worker) serves no portal, so it knows no address for a link: set PORTAL_URL to where the api instances serve /portal, or mint the link on one of them.',
      );
    }
    const token = newToken();
    await this.access.purgeDead(PORTAL_SESSION_ABSOLUTE_SECONDS);
    const expiresAt = await this.access.insertLink({ tokenHash: tokenHashOf(token), account, readOnly, ttlSeconds });
    return { url: `${portalUrl}#token=${token}`, expiresAt: expiresAt.toISOString(), readOnly };
  }

  /**
   * Opens a link: a new session for its account, or the reason it does not
   * open. `replacing` is the live session the browser already holds: its
   * cookie is about to be overwritten, so it is ended with the opening
   * rather than left valid, unreachable, until it idles out. A link that
   * does not open leaves it alone (the browser keeps using it).
   */
  async open(token: string, replacing: string | null = null): Promise<OpenedPortalLink | { refused: LinkRefusal }> {
    const tokenHash = tokenHashOf(token);
    return this.unitOfWork.run(async (tx) => {
      const link = await this.access.openLink(tokenHash, tx);
      if (link === null) return { refused: await this.access.refusalOf(tokenHash, tx) };
      if (replacing !== null) await this.access.endSession(replacing, tx);
      const sessionToken = newToken();
      await this.access.insertSession(
        {
          id: randomBytes(16).toString('hex'),
          tokenHash: tokenHashOf(sessionToken),
          account: { type: link.account_type, id: link.account_id },
          readOnly: link.read_only,
          csrfToken: randomBytes(32).toString('base64url'),
        },
        tx,
      );
      return { sessionToken };
    });
  }

  /**
   * Ends every session and unopened link of the account, also one opened at the same moment; other
   * instances see it on their next request. With `accountType`, an account of the other kind is 404.
   */
  async revoke(
    accountId: string,
    accountType?: PortalAccount['type'],
  ): Promise<{ accountId: string; revoked: number }> {
    const account = await this.account(accountId);
    if (accountType !== undefined && account.type !== accountType) throw DomainError.notFound('Account');
    const { sessions, links } = await this.unitOfWork.run((tx) => this.access.revokeAccount(account, tx));
    return { accountId, revoked: sessions + links };
  }

  /** An organiser or a venue, by id; 404 for anything else. */
  private async account(accountId: unknown): Promise<PortalAccount> {
    if (typeof accountId !== 'string' || accountId.trim() === '') {
      throw DomainError.invalidArgument('accountId must be the id of an organiser or a venue.');
    }
    if (accountId.length <= 200) {
      if ((await this.organisers.find(accountId)) !== null) return { type: 'organiser', id: accountId };
      if (await this.venues.exists(accountId)) return { type: 'venue', id: accountId };
    }
    throw DomainError.notFound('Account');
  }
}
