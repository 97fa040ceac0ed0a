import { Controller, Get, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { HtmlForm } from '../common/html/html-form';
import { RouteTable } from '../common/http/route-table';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { SIGN_IN_PATH } from './dashboard-paths';
import {
  DashboardRedirect,
  HOME_PATH,
  SIGN_IN_REASONS,
  dashboardReturnPage,
  signInReasonOf,
} from './dashboard-redirect';
import { sessionOf } from './dashboard-request';
import { DashboardSessionsService } from './dashboard-sessions.service';

/** Signing in and out: the admin token typed once, then a session cookie. */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@Controller('internal/dashboard')
export class DashboardSignInController {
  constructor(
    private readonly sessions: DashboardSessionsService,
    private readonly pages: DashboardPages,
    private readonly routes: RouteTable,
  ) {}

  @Get()
  @DashboardRoute('sign-in')
  home(@Req() request: FastifyRequest): never {
    throw new DashboardRedirect(sessionOf(request) === null ? SIGN_IN_PATH : HOME_PATH);
  }

  /**
   * The form, sent here (DashboardSessionsService) with the page to return
   * to (`next`) and why (`why`): both are only read, each checked again
   * here, since anyone can write a link with them.
   */
  @Get('sign-in')
  @DashboardRoute('sign-in')
  @AcceptsQuery('next', 'why')
  form(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query('next') nextText: unknown,
    @Query('why') whyText: unknown,
  ): FastifyReply {
    const next = dashboardReturnPage(nextText, this.routes);
    if (sessionOf(request) !== null) throw new DashboardRedirect(next ?? HOME_PATH);
    const why = signInReasonOf(whyText);
    return this.pages.send(request, reply, 'sign-in', {
      title: 'Sign in',
      next,
      notice: why === null ? null : SIGN_IN_REASONS[why],
    });
  }

  @Post('sign-in')
  @DashboardRoute('sign-in')
  signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply): FastifyReply {
    const form = new HtmlForm(request);
    const next = dashboardReturnPage(form.text('next'), this.routes);
    if (!this.sessions.tokenMatches(form.text('token'))) {
      request.log.warn('dashboard sign-in refused: wrong admin token');
      return this.pages.send(
        request,
        reply,
        'sign-in',
        { title: 'Sign in', next, notice: null, error: 'That is not the admin token.' },
        401,
      );
    }
    this.sessions.signIn(request, reply);
    throw new DashboardRedirect(next ?? HOME_PATH);
  }

  @Post('sign-out')
  @DashboardRoute('session')
  signOut(@Req() request: FastifyRequest, @Res() reply: FastifyReply): never {
    this.sessions.signOut(request, reply);
    throw new DashboardRedirect(SIGN_IN_PATH);
  }
}
