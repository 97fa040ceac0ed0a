import { Controller, Get, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { ApiKeysService } from '../identity/api-keys.service';
import { KEY_MANAGER_ROLES, type CreatedKeyResponse } from '../identity/dto/identity.dto';
import { DashboardAccountViews, type Account, type AccountType } from './dashboard-account-views.service';
import { HtmlForm } from '../common/html/html-form';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { DashboardRedirect } from './dashboard-redirect';
import { DashboardSessionsService } from './dashboard-sessions.service';

/** Which field of the mint form a refusal of the key service is about, so the message sits beside it. */
function fieldOf(error: DomainError): 'scopes' | 'actorRole' | 'form' {
  if (error.code === ErrorCode.Forbidden || /role/i.test(error.message)) return 'actorRole';
  if (/scope|venue keys/i.test(error.message)) return 'scopes';
  return 'form';
}

/** The page a mint redirects to; the new key waits for it in the session, never in the URL. */
function createdKeyPath(account: Account, keyId: string): string {
  return `${account.href}/keys/${encodeURIComponent(keyId)}/created`;
}

/**
 * Minting (the key shown once, on the page the mint redirects to) and
 * revoking (after a confirmation page) an account's API keys.
 */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@DashboardRoute('session')
@Controller('internal/dashboard')
export class DashboardKeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly accounts: DashboardAccountViews,
    private readonly sessions: DashboardSessionsService,
    private readonly pages: DashboardPages,
  ) {}

  @Post('organisers/:accountId/keys')
  mintForOrganiser(@Param('accountId') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.mint('organiser', id, request, reply);
  }

  @Post('venues/:accountId/keys')
  mintForVenue(@Param('accountId') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.mint('venue', id, request, reply);
  }

  @Get('organisers/:accountId/keys/:keyId/created')
  createdForOrganiser(
    @Param('accountId') id: string,
    @Param('keyId') keyId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.created('organiser', id, keyId, request, reply);
  }

  @Get('venues/:accountId/keys/:keyId/created')
  createdForVenue(
    @Param('accountId') id: string,
    @Param('keyId') keyId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.created('venue', id, keyId, request, reply);
  }

  @Get('organisers/:accountId/keys/:keyId/revoke')
  confirmOrganiserRevoke(
    @Param('accountId') id: string,
    @Param('keyId') keyId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.confirmRevoke('organiser', id, keyId, request, reply);
  }

  @Get('venues/:accountId/keys/:keyId/revoke')
  confirmVenueRevoke(
    @Param('accountId') id: string,
    @Param('keyId') keyId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.confirmRevoke('venue', id, keyId, request, reply);
  }

  @Post('organisers/:accountId/keys/:keyId/revoke')
  revokeOrganiserKey(@Param('accountId') id: string, @Param('keyId') keyId: string, @Req() request: FastifyRequest) {
    return this.revoke('organiser', id, keyId, request);
  }

  @Post('venues/:accountId/keys/:keyId/revoke')
  revokeVenueKey(@Param('accountId') id: string, @Param('keyId') keyId: string, @Req() request: FastifyRequest) {
    return this.revoke('venue', id, keyId, request);
  }

  private async mint(
    type: AccountType,
    accountId: string,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    const account = await this.accounts.account(type, accountId);
    const form = new HtmlForm(request);
    const scopes = form.list('scopes');
    const keyForm = { name: form.text('name'), scopes, actorRole: form.text('actorRole') ?? '' };
    let created: CreatedKeyResponse;
    try {
      created = await this.keys.mint({
        principal: account.principal,
        scopes: scopes.length === 0 ? undefined : scopes,
        actorRole: keyForm.actorRole,
        ...(keyForm.name === null ? {} : { name: keyForm.name.slice(0, 200) }),
      });
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      const view =
        type === 'organiser' ? await this.accounts.organiserPage(accountId) : await this.accounts.venuePage(accountId);
      const keyErrors = { [fieldOf(error)]: error.message };
      return this.pages.send(request, reply, type, { ...view, keyForm, keyErrors }, error.status);
    }
    const location = createdKeyPath(account, created.id);
    this.sessions.putFlash(request, location, created.key);
    throw new DashboardRedirect(location);
  }

  /**
   * The new key, on the first GET after the mint only; any later request
   * (a reload, the back button) says it was shown once instead. A HEAD
   * request shows nothing, so it leaves the key for the GET.
   */
  private async created(
    type: AccountType,
    accountId: string,
    keyId: string,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    const account = await this.accounts.account(type, accountId);
    const key = await this.accounts.keyOf(account, keyId);
    const plaintext =
      request.method === 'GET' ? this.sessions.takeFlash(request, createdKeyPath(account, key.id)) : null;
    return this.pages.send(request, reply, 'key-created', {
      title: plaintext === null ? `Key ${key.keyPrefix}` : 'Key minted',
      // The focus goes to the key shown once, not to a message above it.
      ownFocus: plaintext !== null,
      key,
      plaintext,
      accountHref: account.href,
      accountName: account.name,
      breadcrumbs: [{ label: account.name, href: account.href }],
    });
  }

  private async confirmRevoke(
    type: AccountType,
    accountId: string,
    keyId: string,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    const account = await this.accounts.account(type, accountId);
    const key = await this.accounts.keyOf(account, keyId);
    if (key.revokedAt !== null) throw new DomainError(ErrorCode.Conflict, 'This key is already revoked.');
    return this.pages.send(request, reply, 'key-revoke', {
      title: `Revoke key ${key.keyPrefix}`,
      key,
      roles: KEY_MANAGER_ROLES,
      accountHref: account.href,
      breadcrumbs: [{ label: account.name, href: account.href }],
    });
  }

  private async revoke(type: AccountType, accountId: string, keyId: string, request: FastifyRequest): Promise<never> {
    const account = await this.accounts.account(type, accountId);
    const key = await this.accounts.keyOf(account, keyId);
    await this.keys.revoke(key.id, new HtmlForm(request).text('actorRole') ?? '');
    this.sessions.flash(request, { kind: 'success', text: `Key ${key.keyPrefix} revoked.` });
    throw new DashboardRedirect(account.href);
  }
}
