import { Inject, Injectable } from '@nestjs/common';
import { flattenLocalisedText } from '../../libs/locale/localised-text';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { VenueResponseDto } from './dto/venue.dto';
import type { VenueView } from './venue.repository';

/** The public Venue shape (api-v1.md "Venue") from its view. */
@Injectable()
export class VenuePresenter {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  present(venue: VenueView): VenueResponseDto {
    return {
      id: venue.id,
      name: venue.name,
      slug: venue.slug,
      description: flattenLocalisedText(venue.description),
      websiteUrl: venue.websiteUrl,
      category: venue.category,
      claimStatus: venue.claimStatus,
      // Built from the id: slugs are display only and not unique.
      url: `${this.config.publicWebUrl}/venues/${encodeURIComponent(venue.id)}`,
      locations: venue.locations,
    };
  }
}
