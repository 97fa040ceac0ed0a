import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import type { PrincipalType, Scope } from './access';

export const ACCESS_KEY = 'required-access';

export interface RequiredAccess {
  /** Scope the key must hold; omitted means any valid key. */
  scope?: Scope;
  /** Principal types the route serves (api-v1.md summary table). */
  principals: PrincipalType[];
}

/** The OpenAPI extension naming the principal types an operation serves (beside its security's scope). */
export const PRINCIPALS_EXTENSION = 'x-principals';

/**
 * Declares who may call a public route. Read by the scope guard (after the
 * key guard has resolved the principal), by `GET /v1`'s endpoint list, and
 * written into the OpenAPI document: the scope as the operation's security
 * requirement (OpenAPI 3.1 lets a bearer scheme list the roles it needs),
 * the principal types as `x-principals`. One declaration, so the reference
 * cannot say other than what the guard enforces.
 */
export const RequireAccess = (access: RequiredAccess): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(ACCESS_KEY, access),
    ApiSecurity('bearer', access.scope === undefined ? [] : [access.scope]),
    ApiExtension(PRINCIPALS_EXTENSION, [...access.principals]),
  );
