import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { PRINCIPAL_TYPES, SCOPES, type Principal, type Scope } from '../../common/auth-context/access';

@ApiSchema({ name: 'OrganiserCreate' })
export class CreateOrganiserDto {
  @ApiProperty({ minLength: 1, maxLength: 500 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  name!: string;

  @ApiPropertyOptional({ description: 'An unclaimed placeholder business (see venue visibility). Default `false`.' })
  @IsOptional()
  @IsBoolean()
  placeholder?: boolean;
}

@ApiSchema({ name: 'Organiser' })
export class OrganiserResponse {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() placeholder!: boolean;
}

/** Roles of the organiser account; only the first two may mint or revoke keys. */
export const KEY_MANAGER_ROLES = ['owner', 'org_manager'] as const;

@ApiSchema({ name: 'KeyCreate' })
export class CreateKeyDto {
  /** Validated by the service, so every malformed principal gets one clear message. */
  @ApiProperty({
    type: () => PrincipalDto,
    description: 'An organiser or a venue (`400 invalid_argument` for a `professional` or an unknown id).',
  })
  @IsObject()
  principal!: { type?: unknown; id?: unknown };

  /** Validated by the service against the Scope enum and the principal's rules. */
  @ApiPropertyOptional({
    enum: SCOPES,
    enumName: 'Scope',
    isArray: true,
    description:
      'Default `events:read` and `orders:read` (a venue key: `events:read`). A venue key may not ask for `events:write` or `orders:read`.',
  })
  @IsOptional()
  scopes?: unknown;

  @ApiProperty({ maxLength: 100, description: '`403 forbidden` unless `owner` or `org_manager`.' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  actorRole!: string;

  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) name?: string;
}

@ApiSchema({ name: 'KeyRevoke' })
export class RevokeKeyDto {
  /** Optional on HTTP (the contract's DELETE has no body); when given it must be owner or org_manager. */
  @ApiPropertyOptional({ maxLength: 100, description: 'When given, `403 forbidden` unless `owner` or `org_manager`.' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  actorRole?: string;
}

@ApiSchema({ name: 'CreatedKey', description: 'A new key: the only answer that ever carries its plaintext.' })
export class CreatedKeyResponse {
  @ApiProperty() id!: string;
  /** The only place the plaintext key ever appears. */
  @ApiProperty({ description: 'The key itself, shown this once.', pattern: '^svc_live_[0-9a-f]{48}$' }) key!: string;
  @ApiProperty({ description: 'Non-secret display fragment of the key.' }) keyPrefix!: string;
  @ApiProperty({ type: () => PrincipalDto }) principal!: Principal;
  @ApiProperty({ enum: SCOPES, enumName: 'Scope', isArray: true }) scopes!: Scope[];
}

@ApiSchema({ name: 'RevokedKey' })
export class RevokedKeyResponse {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: [true] }) revoked!: true;
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

@ApiSchema({ name: 'Principal', description: 'Who a key (or a webhook delivery) belongs to.' })
class PrincipalDto {
  @ApiProperty({ enum: PRINCIPAL_TYPES, enumName: 'PrincipalType' }) type!: string;
  @ApiProperty({ description: 'Identifier of the organiser, venue or professional.' }) id!: string;
}

@ApiSchema({ name: 'Me' })
export class MeResponseDto {
  @ApiProperty({ type: PrincipalDto }) principal!: Principal;
  @ApiProperty({ type: String, nullable: true, description: 'The organiser id for an organiser key; null otherwise.' })
  organizerId!: string | null;
  @ApiProperty({ enum: SCOPES, enumName: 'Scope', isArray: true, description: 'Scopes the key was minted with.' })
  scopes!: Scope[];
  @ApiProperty({ enum: ['v1'] }) apiVersion!: 'v1';
  @ApiProperty({ description: 'Non-secret display fragment of the key.' }) keyPrefix!: string;
}

const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** `GET /v1` (api-v1.md "GET /v1"): what the API looks like to the calling key. */
@ApiSchema({ name: 'ApiDescription' })
export class ApiDescriptionDto {
  @ApiProperty({ description: 'Constant naming the service.' }) api!: string;
  @ApiProperty({ enum: ['v1'] }) version!: 'v1';
  @ApiProperty({ description: 'The organiser id; `""` for a key of another principal type (see `GET /v1/me`).' })
  organizerId!: string;
  @ApiProperty({ enum: SCOPES, enumName: 'Scope', isArray: true }) scopes!: Scope[];
  @ApiProperty({
    ...stringMap,
    description: '`"METHOD /path"` to the scope and principal types it requires, read from the route metadata.',
  })
  endpoints!: Record<string, string>;
  @ApiProperty({
    enum: ['order.confirmed', 'event.published'],
    enumName: 'WebhookEventType',
    isArray: true,
    description: 'Webhook event types this principal may subscribe to.',
  })
  events_available!: string[];
  @ApiProperty() auth!: string;
  @ApiProperty({
    type: 'object',
    required: ['style', 'parameters', 'maxLimit', 'defaultLimit', 'envelope'],
    // An array `required` names the members of the object; the member itself is required too (always present).
    selfRequired: true,
    properties: {
      style: { type: 'string', enum: ['cursor'] },
      parameters: { type: 'array', items: { type: 'string' } },
      maxLimit: { type: 'integer' },
      defaultLimit: { type: 'integer' },
      envelope: { type: 'array', items: { type: 'string' } },
    },
  })
  pagination!: object;
  @ApiProperty({ ...stringMap, description: 'Filter name to description.' }) filters!: Record<string, string>;
  @ApiProperty({
    type: 'object',
    required: ['reads', 'writes', 'writeMethods', 'headers', 'scope'],
    // An array `required` names the members of the object; the member itself is required too (always present).
    selfRequired: true,
    properties: {
      reads: { type: 'string' },
      writes: { type: 'string' },
      writeMethods: { type: 'array', items: { type: 'string' } },
      headers: { type: 'array', items: { type: 'string' } },
      scope: { type: 'string', description: 'States that the budget belongs to the account.' },
    },
  })
  rateLimits!: object;
  @ApiProperty({ description: 'Equals `X-Request-Id`.' }) requestId!: string;
  @ApiProperty({ format: 'uri' }) docs!: string;
}

/** The members at the top level, as the contract says, and the same object under `data`. */
@ApiSchema({ name: 'ApiRoot' })
export class ApiRootDto extends ApiDescriptionDto {
  @ApiProperty({ type: ApiDescriptionDto }) data!: ApiDescriptionDto;
}
