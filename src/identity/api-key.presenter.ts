import { Injectable } from '@nestjs/common';
import type { KeySummary } from './dto/identity.dto';
import type { ApiKeyView } from './api-key.repository';

/** A key as the internal API and the CLI list it. */
@Injectable()
export class ApiKeyPresenter {
  present(key: ApiKeyView): KeySummary {
    return {
      id: key.id,
      keyPrefix: key.keyPrefix,
      principal: { type: key.principalType, id: key.principalId },
      scopes: key.scopes,
      name: key.name,
      createdAt: key.createdAt,
      revokedAt: key.revokedAt,
      lastUsedAt: key.lastUsedAt,
    };
  }
}
