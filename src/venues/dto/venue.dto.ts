import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { pageSchemaOf } from '../../common/openapi/page-schema';
import { IsIanaTimeZone, IsLocaleMap } from '../../common/validation/validators';

@ApiSchema({ name: 'LocationCreate' })
export class CreateLocationDto {
  @ApiPropertyOptional({ maxLength: 500 }) @IsOptional() @IsString() @MaxLength(500) displayName?: string;
  @ApiPropertyOptional({ maxLength: 1000 }) @IsOptional() @IsString() @MaxLength(1000) address?: string;
  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) city?: string;
  @ApiPropertyOptional({ maxLength: 100 }) @IsOptional() @IsString() @MaxLength(100) country?: string;
  @ApiPropertyOptional({
    description: 'An IANA zone, default `UTC`: where "noon in the venue\'s time zone" of `dateOnly` is.',
    examples: ['Europe/Amsterdam'],
  })
  @IsOptional()
  @IsIanaTimeZone()
  timeZone?: string;
}

@ApiSchema({ name: 'VenueCreate' })
export class CreateVenueDto {
  @ApiProperty({ minLength: 1, maxLength: 500 }) @IsString() @IsNotEmpty() @MaxLength(500) name!: string;
  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) slug?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "Locale code to text, like an event's description.",
  })
  @IsOptional()
  @IsLocaleMap()
  description?: Record<string, string>;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) websiteUrl?: string;
  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) category?: string;
  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) claimStatus?: string;

  @ApiPropertyOptional({ type: () => [CreateLocationDto], maxItems: 500, description: 'Each gets an `id`.' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => CreateLocationDto)
  locations?: CreateLocationDto[];
}

@ApiSchema({ name: 'VenueLocation' })
export class VenueLocationResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true }) displayName!: string | null;
  @ApiProperty({ type: String, nullable: true }) address!: string | null;
  @ApiProperty({ type: String, nullable: true }) city!: string | null;
  @ApiProperty({ type: String, nullable: true }) country!: string | null;
}

@ApiSchema({ name: 'Venue', description: 'The venue record (read-only; returned only to venue keys).' })
export class VenueResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true }) name!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Display only; uniqueness is not enforced.' })
  slug!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Flattened to one language (EN, else first locale).' })
  description!: string | null;
  @ApiProperty({ type: String, nullable: true }) websiteUrl!: string | null;
  @ApiProperty({ type: String, nullable: true }) category!: string | null;
  @ApiProperty({ type: String, nullable: true }) claimStatus!: string | null;
  @ApiProperty({ format: 'uri', description: 'Built from the venue id, not the slug.' }) url!: string;
  @ApiProperty({
    type: [VenueLocationResponseDto],
    maxItems: 30,
    description: 'The oldest 30 live locations, in creation order; deleted ones are omitted.',
  })
  locations!: VenueLocationResponseDto[];
}

/** The page envelope around the one Venue, for the OpenAPI document. */
export const VenuePage = pageSchemaOf(VenueResponseDto, 'VenuePage');

@ApiSchema({ name: 'Location', description: 'A venue location with its time zone (internal API).' })
export class LocationResponseDto extends VenueLocationResponseDto {
  @ApiProperty() timeZone!: string;
}
