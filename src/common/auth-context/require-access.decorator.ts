import { SetMetadata } from '@nestjs/common';
import type { PrincipalType, Scope } from './access';

export const ACCESS_KEY = 'required-access';

export interface RequiredAccess {
  /** Scope the key must hold; omitted means any valid key. */
  scope?: Scope;
  /** Principal types the route serves (api-v1.md summary table). */
  principals: PrincipalType[];
}

/**
 * Declares who may call a public route. Read by the scope guard (after the
 * key guard has resolved the principal) and by `GET /v1`'s endpoint list.
 */
export const RequireAccess = (access: RequiredAccess): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCESS_KEY, access);
