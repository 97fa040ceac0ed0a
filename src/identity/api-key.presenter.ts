import { Injectable } from '@nestjs/common';
import { formatInstant } from '../../libs/time/instant';
import type { KeySummary } from './dto/identity.dto';
import type { ApiKeyEntity } from './entities/api-key.entity';

/** A key as the internal API and the CLI list it: everything but its hash, which never leaves the repository. */
@Injectable()
export class ApiKeyPresenter {
  present(key: ApiKeyEntity): KeySummary {
    return {
      id: key.id,
      keyPrefix: key.keyPrefix,
      principal: { type: key.principalType, id: key.principalId },
      scopes: key.scopes,
      name: key.name,
      createdAt: key.createdAt.toISOString(),
      revokedAt: formatInstant(key.revokedAt),
      lastUsedAt: formatInstant(key.lastUsedAt),
    };
  }
}
