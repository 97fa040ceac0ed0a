import { Inject, Injectable } from '@nestjs/common';
import { flattenLocalisedText } from '../../libs/locale/localised-text';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { VenueResponseDto } from './dto/venue.dto';
import type { VenueRow } from './venue.repository';

/** The public Venue shape (api-v1.md "Venue") from its row. */
@Injectable()
export class VenuePresenter {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  present(venue: VenueRow): VenueResponseDto {
    return {
      id: venue.id,
      name: venue.name,
      slug: venue.slug,
      description: flattenLocalisedText(venue.description),
      websiteUrl: venue.website_url,
      category: venue.category,
      claimStatus: venue.claim_status,
      // Built from the id: slugs are display only and not unique.
      url: `${this.config.publicWebUrl}/venues/${encodeURIComponent(venue.id)}`,
      locations: venue.locations,
    };
  }
}
