import { createHash } from 'node:crypto';

/**
 * A webhook sealing key's id: a digest of the key, never the key. A sealed
 * secret names the id of the key that opens it, and the instance registry
 * records the ids each instance can open, so a re-seal can tell whether a
 * running instance would be left unable to open the new key.
 */
export function sealingKeyId(hex: string): string {
  return `k${createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex').slice(0, 12)}`;
}
