import { Module } from '@nestjs/common';
import { InstanceRegistry } from './instance-registry';
import { InstancesInternalController } from './instances.internal.controller';

/**
 * Which instances serve this database (infrastructure, no bounded context):
 * the registry, its internal route, and the connection check at start.
 */
@Module({
  controllers: [InstancesInternalController],
  providers: [InstanceRegistry],
  exports: [InstanceRegistry],
})
export class InstancesModule {}
