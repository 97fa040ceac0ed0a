import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations, InternalRefusals } from '../common/openapi/internal-operations.decorator';
import { ApiKeysService } from './api-keys.service';
import {
  CreateKeyDto,
  CreateOrganiserDto,
  RevokeKeyDto,
  type CreatedKeyResponse,
  type OrganiserResponse,
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
  createOrganiser(@ValidatedBody() body: CreateOrganiserDto): Promise<OrganiserResponse> {
    return this.organisers.create(body);
  }

  @Post('keys')
  @HttpCode(201)
  @InternalRefusals({ forbidden: 'actorRole is not owner or org_manager' })
  createKey(@ValidatedBody() body: CreateKeyDto): Promise<CreatedKeyResponse> {
    return this.keys.mint(body);
  }

  @Delete('keys/:keyId')
  @InternalRefusals({ forbidden: 'actorRole, when given, is not owner or org_manager' })
  revokeKey(
    @Param('keyId') keyId: string,
    // Typed as the class alone: a union would erase the metatype and skip validation.
    @ValidatedBody({ optional: true }) body: RevokeKeyDto,
  ): Promise<{ id: string; revoked: true }> {
    return this.keys.revoke(keyId, body.actorRole);
  }
}
