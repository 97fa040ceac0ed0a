import { Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { HtmlForm } from '../common/html/html-form';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { DASHBOARD_BASE, SIGN_IN_PATH } from './dashboard-paths';
import { DashboardRedirect } from './dashboard-redirect';
import { sessionOf } from './dashboard-request';
import { DashboardSessionsService } from './dashboard-sessions.service';

const HOME = `${DASHBOARD_BASE}/accounts`;

/** Signing in and out: the admin token typed once, then a session cookie. */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@Controller('internal/dashboard')
export class DashboardSignInController {
  constructor(
    private readonly sessions: DashboardSessionsService,
    private readonly pages: DashboardPages,
  ) {}

  @Get()
  @DashboardRoute('sign-in')
  home(@Req() request: FastifyRequest): never {
    throw new DashboardRedirect(sessionOf(request) === null ? SIGN_IN_PATH : HOME);
  }

  @Get('sign-in')
  @DashboardRoute('sign-in')
  form(@Req() request: FastifyRequest, @Res() reply: FastifyReply): FastifyReply {
    if (sessionOf(request) !== null) throw new DashboardRedirect(HOME);
    return this.pages.send(request, reply, 'sign-in', { title: 'Sign in' });
  }

  @Post('sign-in')
  @DashboardRoute('sign-in')
  signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply): FastifyReply {
    if (!this.sessions.tokenMatches(new HtmlForm(request).text('token'))) {
      request.log.warn('dashboard sign-in refused: wrong admin token');
      return this.pages.send(
        request,
        reply,
        'sign-in',
        { title: 'Sign in', error: 'That is not the admin token.' },
        401,
      );
    }
    this.sessions.signIn(request, reply);
    throw new DashboardRedirect(HOME);
  }

  @Post('sign-out')
  @DashboardRoute('session')
  signOut(@Req() request: FastifyRequest, @Res() reply: FastifyReply): never {
    this.sessions.signOut(request, reply);
    throw new DashboardRedirect(SIGN_IN_PATH);
  }
}
