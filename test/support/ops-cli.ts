import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { loadAppConfig } from '../../src/config/app-config';
import { parseOpsArguments } from '../../src/ops/ops-arguments';
import { runOpsCommand } from '../../src/ops/ops-command-runner';
import { openOpsContext } from '../../src/ops/ops-context';
import type { TestService } from './test-service';

const run = promisify(execFile);
const OPS = join(__dirname, '..', '..', 'src', 'ops', 'ops.main.js');

/**
 * The settings `npm run ops` needs to act on a running test service's data:
 * its database and the key that seals its webhook secrets, quiet logs, and
 * `extra` on top (e.g. WEBHOOK_ALLOW_PRIVATE_CIDRS for loopback receivers).
 */
export function opsEnvFor(service: TestService, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: service.databaseUrl,
    WEBHOOK_SECRET_KEY: service.config.webhooks.secretKey ?? '',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

export interface OpsResult {
  code: number;
  /** The command's JSON on stdout; undefined when it printed nothing. */
  json: any;
  stderr: string;
}

/**
 * One `npm run ops -- <args>` as a user runs it (the compiled CLI in its own
 * process), with `env`. A process costs seconds on a busy machine, so only the
 * smoke test of the real binary uses this; the commands are tested with `ops`.
 */
export async function runOpsProcess(args: string[], env: NodeJS.ProcessEnv): Promise<OpsResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [OPS, ...args], { env });
    return { code: 0, json: JSON.parse(stdout), stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return {
      code: failed.code,
      json: failed.stdout === '' ? undefined : JSON.parse(failed.stdout),
      stderr: failed.stderr,
    };
  }
}

/**
 * One CLI command in this process, as `src/ops/ops.main.ts` runs it: the
 * settings read from `env` (which must name a DATABASE_URL), a fresh
 * application context without background work, the command, then the context
 * closed. A crash of the command is exit code 1 with its message on stderr.
 */
export async function ops(args: string[], env: Record<string, string>): Promise<OpsResult> {
  const config = loadAppConfig(env);
  if (config.databaseUrl === null) throw new Error('ops(): give the test database as DATABASE_URL');
  const app = await openOpsContext(config, pino({ level: config.logLevel }));
  try {
    const outcome = await runOpsCommand(app, parseOpsArguments(args));
    return {
      code: outcome.code,
      json: outcome.stdout === '' ? undefined : JSON.parse(outcome.stdout),
      stderr: outcome.stderr,
    };
  } catch (error) {
    return { code: 1, json: undefined, stderr: String(error) };
  } finally {
    await app.close();
  }
}
