import { Controller, Get } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { InternalOperations, InternalSuccess } from '../common/openapi/internal-operations.decorator';
import { InstanceRegistry } from '../database/instances/instance-registry';
import type { InstanceRow } from '../database/instances/instance-statements';

const INSTANCE_SCHEMA = {
  type: 'object',
  required: ['id', 'host', 'role', 'version', 'startedAt', 'lastSeenAt'],
  properties: {
    id: { type: 'string' },
    host: { type: 'string' },
    role: { type: 'string', enum: ['all', 'api', 'worker'] },
    version: { type: 'string' },
    startedAt: { type: 'string', format: 'date-time' },
    lastSeenAt: { type: 'string', format: 'date-time' },
  },
};

@InternalOperations('Instances')
@Controller('internal')
export class InstancesInternalController {
  constructor(private readonly registry: InstanceRegistry) {}

  @Get('instances')
  @ApiOperation({
    summary: 'The live instances',
    description: 'Every instance serving this database. An instance that has missed three heartbeats is not listed.',
  })
  @InternalSuccess({
    status: 200,
    description: 'The live instances, oldest first.',
    body: { dataSchema: { type: 'array', items: INSTANCE_SCHEMA } },
  })
  instances(): Promise<InstanceRow[]> {
    return this.registry.listLive();
  }
}
