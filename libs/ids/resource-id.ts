import { randomBytes } from 'node:crypto';

/**
 * Resource ids are `<prefix>_` + 24 lowercase hex characters (96 random
 * bits), Stripe-style: the prefix tells an id's kind at a glance, and ids are
 * plain text, so a malformed id in a path is simply "not found" rather than a
 * database type error.
 */
export type ResourceIdPrefix = 'org' | 'ven' | 'loc' | 'key' | 'evt' | 'ord' | 'whk';

export function newResourceId(prefix: ResourceIdPrefix): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}
