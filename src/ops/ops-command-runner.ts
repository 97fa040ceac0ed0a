import type { INestApplicationContext } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error';
import { ConfigError } from '../config/app-config';
import { OpsUsageError, refuseUnknownFlags, type OpsArguments } from './ops-arguments';
import { OPS_COMMANDS } from './ops-commands';

/** What one CLI command prints and the exit code it ends with. */
export interface OpsOutcome {
  /** 0 done, 1 refused by a domain rule (its error code on stdout), 2 usage error or a refusal to run (on stderr). */
  code: 0 | 1 | 2;
  /** The command's JSON, or the `{error, message}` body of a refusal; empty on a usage error. */
  stdout: string;
  stderr: string;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function opsUsage(): string {
  return Object.entries(OPS_COMMANDS)
    .map(([name, command]) => `  npm run ops -- ${name} ${command.usage}`.trimEnd())
    .join('\n');
}

/** A usage error: what is wrong and the command's usage, on stderr, with exit code 2. */
function usageError(name: string, usage: string, message: string): OpsOutcome {
  return {
    code: 2,
    stdout: '',
    stderr: `${name}: ${message}\nusage: ${`npm run ops -- ${name} ${usage}`.trimEnd()}\n`,
  };
}

function unknownCommand(): OpsOutcome {
  return { code: 2, stdout: '', stderr: `usage:\n${opsUsage()}\n` };
}

function refusedFlags(name: string, usage: string, args: OpsArguments): OpsOutcome | null {
  try {
    refuseUnknownFlags(args, usage);
    return null;
  } catch (error) {
    if (error instanceof OpsUsageError) return usageError(name, usage, error.message);
    throw error;
  }
}

/**
 * The command line's own mistakes (an unknown command, flag or stray word),
 * found before anything is opened: the CLI checks them before it starts a
 * database, so a typo never starts PostgreSQL. Null when there are none.
 */
export function refusedUsage(args: OpsArguments): OpsOutcome | null {
  const command = args.command === undefined ? undefined : OPS_COMMANDS[args.command];
  if (args.command === undefined || command === undefined) return unknownCommand();
  return refusedFlags(args.command, command.usage, args);
}

/**
 * Runs one parsed `npm run ops` command against a booted application context
 * and turns its result or refusal into output and an exit code. Kept apart
 * from process start-up (config, embedded database, `process.exit`) so the
 * commands can be tested in-process; anything other than a domain refusal or
 * a usage error is rethrown, as a crash of the command.
 */
export async function runOpsCommand(app: INestApplicationContext, args: OpsArguments): Promise<OpsOutcome> {
  const name = args.command;
  const command = name === undefined ? undefined : OPS_COMMANDS[name];
  if (name === undefined || command === undefined) return unknownCommand();
  const refused = refusedFlags(name, command.usage, args);
  if (refused !== null) return refused;
  const refusal = command.refusal === undefined ? null : await command.refusal(app);
  if (refusal !== null) return { code: 2, stdout: '', stderr: `${refusal}\n` };
  try {
    const result = await command.run(app, args);
    const note = command.note?.(result) ?? null;
    return { code: 0, stdout: json({ data: result }), stderr: note === null ? '' : `${note}\n` };
  } catch (error) {
    if (error instanceof DomainError) {
      return { code: 1, stdout: json({ error: error.code, message: error.message }), stderr: '' };
    }
    if (error instanceof OpsUsageError) return usageError(name, command.usage, error.message);
    // A refusal to run with these settings (keys that cannot open a stored secret), said as a setting's refusal
    // is: one line on stderr, exit code 2.
    if (error instanceof ConfigError) {
      return { code: 2, stdout: '', stderr: `${name} refused: ${error.message}\n` };
    }
    throw error;
  }
}
