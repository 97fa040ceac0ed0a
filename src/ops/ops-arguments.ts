/** `--flag value` pairs and bare `--switch`es after the command name. */
export interface OpsArguments {
  command: string | undefined;
  flags: Map<string, string | true>;
}

export class OpsUsageError extends Error {}

export function parseOpsArguments(argv: string[]): OpsArguments {
  const [command, ...rest] = argv;
  const flags = new Map<string, string | true>();
  for (let index = 0; index < rest.length; index += 1) {
    const token = rest[index] ?? '';
    if (!token.startsWith('--')) throw new OpsUsageError(`unexpected argument "${token}"`);
    const next = rest[index + 1];
    if (next === undefined || next.startsWith('--')) {
      flags.set(token.slice(2), true);
    } else {
      flags.set(token.slice(2), next);
      index += 1;
    }
  }
  return { command, flags };
}

export function requiredFlag(args: OpsArguments, name: string): string {
  const value = args.flags.get(name);
  if (typeof value !== 'string' || value === '') throw new OpsUsageError(`--${name} <value> is required`);
  return value;
}

export function optionalFlag(args: OpsArguments, name: string): string | undefined {
  const value = args.flags.get(name);
  if (value === true) throw new OpsUsageError(`--${name} needs a value`);
  return value;
}
