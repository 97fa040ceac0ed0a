import 'reflect-metadata';
import pino from 'pino';
import { ConfigError, loadAppConfig } from '../config/app-config';
import { withEmbeddedDefault } from '../database/with-embedded-default';
import { isHelpRequest, parseOpsArguments } from './ops-arguments';
import { runOpsCommand, opsUsage } from './ops-command-runner';
import { OPS_COMMANDS } from './ops-commands';
import { openOpsContext } from './ops-context';

/** `npm run ops -- <command> [--flag value ...]`: boots the services without HTTP and runs one command. */
async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (isHelpRequest(argv)) {
    process.stdout.write(`usage:\n${opsUsage()}\n`);
    return 0;
  }
  const args = parseOpsArguments(argv);
  if (args.command === undefined || OPS_COMMANDS[args.command] === undefined) {
    // Before any database work: a typo should not start PostgreSQL.
    const said = args.command === undefined ? 'no command given' : `unknown command: ${args.command}`;
    process.stderr.write(`${said}\nusage:\n${opsUsage()}\n`);
    return 2;
  }
  // The embedded database's lines go to stderr: stdout carries only the command's JSON.
  const { config, embedded } = await withEmbeddedDefault(
    { ...loadAppConfig(), logLevel: 'warn' },
    (message) => process.stderr.write(`${message}\n`),
    { existingOnly: true, leaveRunningWhileUsed: true },
  );
  // stdout carries only the command's JSON; the service's own warnings go to stderr.
  const app = await openOpsContext(config, pino({ level: 'warn' }, pino.destination(2)));
  try {
    const outcome = await runOpsCommand(app, args);
    process.stdout.write(outcome.stdout);
    process.stderr.write(outcome.stderr);
    return outcome.code;
  } finally {
    await app.close();
    await embedded?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
