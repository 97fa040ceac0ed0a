import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VenuesModule } from '../venues/venues.module';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ApiKeyPresenter } from './api-key.presenter';
import { ApiOverviewPresenter } from './api-overview.presenter';
import { API_KEY_CACHE_TRUST_WINDOW_MS, API_KEY_CACHE_TTL_MS, ApiKeyCache } from './api-key-cache';
import { ApiKeyRevocationsListener } from './api-key-revocations.listener';
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
    ApiKeyPresenter,
    ApiKeyRepository,
    ApiKeysService,
    OrganiserRepository,
    OrganisersService,
    KeyUsageRecorder,
    {
      provide: ApiKeyCache,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        new ApiKeyCache({
          maxEntries: config.apiKeyCacheMaxEntries,
          ttlMs: API_KEY_CACHE_TTL_MS,
          trustWindowMs: API_KEY_CACHE_TRUST_WINDOW_MS,
        }),
    },
    ApiKeyRevocationsListener,
  ],
  exports: [ApiKeysService, OrganisersService],
})
export class IdentityModule {}
