import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VenuesModule } from '../venues/venues.module';
import { ApiOverviewPresenter } from './api-overview.presenter';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyEntity } from './entities/api-key.entity';
import { OrganiserEntity } from './entities/organiser.entity';
import { IdentityController } from './identity.controller';
import { IdentityInternalController } from './identity.internal.controller';
import { KeyUsageRecorder } from './key-usage.recorder';
import { OrganiserRepository } from './organiser.repository';
import { OrganisersService } from './organisers.service';

@Module({
  imports: [TypeOrmModule.forFeature([OrganiserEntity, ApiKeyEntity]), VenuesModule],
  controllers: [IdentityController, IdentityInternalController],
  providers: [
    ApiOverviewPresenter,
    ApiKeyRepository,
    ApiKeysService,
    OrganiserRepository,
    OrganisersService,
    KeyUsageRecorder,
  ],
  exports: [ApiKeysService, OrganisersService],
})
export class IdentityModule {}
