import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VenueLocationEntity } from './entities/venue-location.entity';
import { VenueEntity } from './entities/venue.entity';
import { VenuesController } from './venues.controller';
import { VenuesInternalController } from './venues.internal.controller';
import { VenuePresenter } from './venue.presenter';
import { VenueRepository } from './venue.repository';
import { VenuesService } from './venues.service';

@Module({
  imports: [TypeOrmModule.forFeature([VenueEntity, VenueLocationEntity])],
  controllers: [VenuesController, VenuesInternalController],
  providers: [VenuesService, VenueRepository, VenuePresenter],
  exports: [VenuesService],
})
export class VenuesModule {}
