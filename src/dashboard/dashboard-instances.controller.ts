import { Controller, Get, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { InstanceRegistry } from '../database/instances/instance-registry';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';

/** The live instances of the service (the registry's view), read-only. */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@DashboardRoute('session')
@Controller('internal/dashboard')
export class DashboardInstancesController {
  constructor(
    private readonly registry: InstanceRegistry,
    private readonly pages: DashboardPages,
  ) {}

  @Get('instances')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const instances = await this.registry.listLive();
    return this.pages.send(request, reply, 'instances', { title: 'Instances', instances, selfId: this.registry.id });
  }
}
