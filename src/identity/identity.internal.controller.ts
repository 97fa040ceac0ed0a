import { Controller, Delete, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations, InternalRefusals, InternalSuccess } from '../common/openapi/internal-operations.decorator';
import { ApiKeysService } from './api-keys.service';
import {
  CreatedKeyResponse,
  CreateKeyDto,
  CreateOrganiserDto,
  OrganiserResponse,
  RevokedKeyResponse,
  RevokeKeyDto,
} from './dto/identity.dto';
import { OrganisersService } from './organisers.service';

@InternalOperations('Identity')
@Controller('internal')
export class IdentityInternalController {
  constructor(
    private readonly organisers: OrganisersService,
    private readonly keys: ApiKeysService,
  ) {}

  @Post('organisers')
  @HttpCode(201)
  @InternalSuccess({ status: 201, description: 'The organiser.', body: { data: OrganiserResponse } })
  createOrganiser(@ValidatedBody() body: CreateOrganiserDto): Promise<OrganiserResponse> {
    return this.organisers.create(body);
  }

  @Post('keys')
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @InternalRefusals({ forbidden: 'actorRole is not owner or org_manager' })
  @InternalSuccess({
    status: 201,
    description: 'The key, with its plaintext shown this once.',
    body: { data: CreatedKeyResponse },
    headers: ['Cache-Control'],
  })
  createKey(@ValidatedBody() body: CreateKeyDto): Promise<CreatedKeyResponse> {
    return this.keys.mint(body);
  }

  @Delete('keys/:keyId')
  @InternalRefusals({ forbidden: 'actorRole, when given, is not owner or org_manager' })
  @InternalSuccess({
    status: 200,
    description: 'Revoked: the key answers 401 from the next request on, on every instance within 1 s.',
    body: { data: RevokedKeyResponse },
  })
  revokeKey(
    @Param('keyId') keyId: string,
    // Typed as the class alone: a union would erase the metatype and skip validation.
    @ValidatedBody({ optional: true }) body: RevokeKeyDto,
  ): Promise<RevokedKeyResponse> {
    return this.keys.revoke(keyId, body.actorRole);
  }
}
