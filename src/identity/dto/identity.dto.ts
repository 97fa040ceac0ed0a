import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { PRINCIPAL_TYPES, SCOPES, type Principal, type Scope } from '../../common/auth-context/access';

export class CreateOrganiserDto {
  @IsString() @IsNotEmpty() @MaxLength(500) name!: string;
  @IsOptional() @IsBoolean() placeholder?: boolean;
}

export interface OrganiserResponse {
  id: string;
  name: string;
  placeholder: boolean;
}

/** Roles of the organiser account; only the first two may mint or revoke keys. */
export const KEY_MANAGER_ROLES = ['owner', 'org_manager'] as const;

export class CreateKeyDto {
  /** Validated by the service, so every malformed principal gets one clear message. */
  @IsObject() principal!: { type?: unknown; id?: unknown };
  /** Validated by the service against the Scope enum and the principal's rules. */
  @IsOptional() scopes?: unknown;
  @IsString() @IsNotEmpty() @MaxLength(100) actorRole!: string;
  @IsOptional() @IsString() @MaxLength(200) name?: string;
}

export class RevokeKeyDto {
  /** Optional on HTTP (the contract's DELETE has no body); when given it must be owner or org_manager. */
  @IsOptional() @IsString() @MaxLength(100) actorRole?: string;
}

export interface CreatedKeyResponse {
  id: string;
  /** The only place the plaintext key ever appears. */
  key: string;
  keyPrefix: string;
  principal: Principal;
  scopes: Scope[];
}

export interface KeySummary {
  id: string;
  keyPrefix: string;
  principal: Principal;
  scopes: Scope[];
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

class PrincipalDto {
  @ApiProperty({ enum: PRINCIPAL_TYPES }) type!: string;
  @ApiProperty() id!: string;
}

export class MeResponseDto {
  @ApiProperty({ type: PrincipalDto }) principal!: Principal;
  @ApiProperty({ type: String, nullable: true, description: 'The organiser id for an organiser key; null otherwise.' })
  organizerId!: string | null;
  @ApiProperty({ enum: SCOPES, isArray: true }) scopes!: Scope[];
  @ApiProperty({ example: 'v1' }) apiVersion!: 'v1';
  @ApiProperty({ description: 'Non-secret display fragment of the key.' }) keyPrefix!: string;
}
