/** `--flag value` pairs and bare `--switch`es after the command name. */
export interface OpsArguments {
  command: string | undefined;
  flags: Map<string, string | true>;
  /** Words that are neither a flag nor a flag's value: refused with the command's usage (refuseUnknownFlags). */
  strays: string[];
}

export class OpsUsageError extends Error {}

/** `help`, `--help` or `-h` alone: the usage, on stdout, with exit code 0. */
export function isHelpRequest(argv: readonly string[]): boolean {
  return argv.length === 1 && ['help', '--help', '-h'].includes(argv[0]!);
}

export function parseOpsArguments(argv: string[]): OpsArguments {
  const [command, ...rest] = argv;
  const flags = new Map<string, string | true>();
  const strays: string[] = [];
  for (let index = 0; index < rest.length; index += 1) {
    const token = rest[index] ?? '';
    if (!token.startsWith('--')) {
      strays.push(token);
      continue;
    }
    const next = rest[index + 1];
    if (next === undefined || next.startsWith('--')) {
      flags.set(token.slice(2), true);
    } else {
      flags.set(token.slice(2), next);
      index += 1;
    }
  }
  return { command, flags, strays };
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

/**
 * An on/off flag: on as `--flag` or `--flag true`, off when absent or
 * `--flag false`. Any other value is refused, so `--read-only yes` never
 * quietly mints a link that is not read-only.
 */
export function switchFlag(args: OpsArguments, name: string): boolean {
  const value = args.flags.get(name);
  if (value === undefined || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw new OpsUsageError(`--${name} is on or off: give it alone (or as --${name} true / false), not "${value}"`);
}

/** The flags a command's usage names (`--name <name> [--placeholder]` names `name` and `placeholder`). */
export function flagsOfUsage(usage: string): Set<string> {
  return new Set([...usage.matchAll(/--([a-z][a-z-]*)/g)].map((match) => match[1]!));
}

/**
 * Refuses a flag the command does not take, and a word that is no flag's
 * value: a typo (`--readonly`, `--scope`, a value split by the shell) must
 * not be ignored.
 */
export function refuseUnknownFlags(args: OpsArguments, usage: string): void {
  if (args.strays.length > 0) {
    throw new OpsUsageError(
      `unexpected argument${args.strays.length > 1 ? 's' : ''} ${args.strays.map((word) => `"${word}"`).join(', ')}`,
    );
  }
  const known = flagsOfUsage(usage);
  const unknown = [...args.flags.keys()].filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new OpsUsageError(
      `unknown flag${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `--${name}`).join(', ')}`,
    );
  }
}
