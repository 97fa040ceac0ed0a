import { ApiProperty } from '@nestjs/swagger';
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
import { IsIanaTimeZone, IsLocaleMap } from '../../common/validation/validators';

export class CreateLocationDto {
  @IsOptional() @IsString() @MaxLength(500) displayName?: string;
  @IsOptional() @IsString() @MaxLength(1000) address?: string;
  @IsOptional() @IsString() @MaxLength(200) city?: string;
  @IsOptional() @IsString() @MaxLength(100) country?: string;
  @IsOptional() @IsIanaTimeZone() timeZone?: string;
}

export class CreateVenueDto {
  @IsString() @IsNotEmpty() @MaxLength(500) name!: string;
  @IsOptional() @IsString() @MaxLength(200) slug?: string;
  @IsOptional() @IsLocaleMap() description?: Record<string, string>;
  @IsOptional() @IsString() @MaxLength(2000) websiteUrl?: string;
  @IsOptional() @IsString() @MaxLength(200) category?: string;
  @IsOptional() @IsString() @MaxLength(200) claimStatus?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => CreateLocationDto)
  locations?: CreateLocationDto[];
}

export class VenueLocationResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true }) displayName!: string | null;
  @ApiProperty({ type: String, nullable: true }) address!: string | null;
  @ApiProperty({ type: String, nullable: true }) city!: string | null;
  @ApiProperty({ type: String, nullable: true }) country!: string | null;
}

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

export class LocationResponseDto extends VenueLocationResponseDto {
  @ApiProperty() timeZone!: string;
}
