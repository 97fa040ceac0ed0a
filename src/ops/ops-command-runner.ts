import type { INestApplicationContext } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error';
import { OpsUsageError, refuseUnknownFlags, type OpsArguments } from './ops-arguments';
import { OPS_COMMANDS } from './ops-commands';

/** What one CLI command prints and the exit code it ends with. */
export interface OpsOutcome {
  /** 0 done, 1 refused by a domain rule (its error code on stdout), 2 usage error (on stderr). */
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

/**
 * Runs one parsed `npm run ops` command against a booted application context
 * and turns its result or refusal into output and an exit code. Kept apart
 * from process start-up (config, embedded database, `process.exit`) so the
 * commands can be tested in-process; anything other than a domain refusal or
 * a usage error is rethrown, as a crash of the command.
 */
export async function runOpsCommand(app: INestApplicationContext, args: OpsArguments): Promise<OpsOutcome> {
  const command = args.command === undefined ? undefined : OPS_COMMANDS[args.command];
  if (command === undefined) return { code: 2, stdout: '', stderr: `usage:\n${opsUsage()}\n` };
  try {
    refuseUnknownFlags(args, command.usage);
    return { code: 0, stdout: json({ data: await command.run(app, args) }), stderr: '' };
  } catch (error) {
    if (error instanceof DomainError) {
      return { code: 1, stdout: json({ error: error.code, message: error.message }), stderr: '' };
    }
    if (error instanceof OpsUsageError || error instanceof SyntaxError) {
      const stderr = `${args.command}: ${error.message}\nusage: npm run ops -- ${args.command} ${command.usage}\n`;
      return { code: 2, stdout: '', stderr };
    }
    throw error;
  }
}
