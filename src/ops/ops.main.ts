// First: every library loaded after it comes from the vendor bundle when there is one (libs/modules/vendor-bundle.ts).
import '../../libs/modules/use-vendor-bundle';
import 'reflect-metadata';
import pino from 'pino';
import { ConfigError, loadAppConfig } from '../config/app-config';
import { withEmbeddedDefault } from '../database/with-embedded-default';
import { isHelpRequest, parseOpsArguments } from './ops-arguments';
import { refusedUsage, runOpsCommand, opsUsage } from './ops-command-runner';
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
  const refused = refusedUsage(args);
  if (refused !== null) {
    process.stderr.write(refused.stderr);
    return refused.code;
  }
  // The embedded database's lines go to stderr: stdout carries only the command's JSON.
  const { config, embedded } = await withEmbeddedDefault(
    { ...loadAppConfig(), logLevel: 'warn' },
    (message) => process.stderr.write(`${message}\n`),
    { existingOnly: true, leaveRunningWhileUsed: true },
  );
  if (stopSignal.code !== null) {
    await embedded?.stop();
    return stopSignal.code;
  }
  // stdout carries only the command's JSON; the service's own warnings go to stderr.
  const app = await openOpsContext(config, pino({ level: 'warn' }, pino.destination(2))).catch(
    async (error: unknown) => {
      // A refused start (a schema behind this build) stops the database this command started, as its end would.
      await embedded?.stop();
      throw error;
    },
  );
  try {
    if (stopSignal.code !== null) return stopSignal.code;
    const outcome = await runOpsCommand(app, args);
    process.stdout.write(outcome.stdout);
    process.stderr.write(outcome.stderr);
    return outcome.code;
  } finally {
    await app.close();
    await embedded?.stop();
  }
}

/**
 * Ctrl-C or SIGTERM: the embedded server runs in a process group of its own
 * (a terminal's Ctrl-C does not reach it), so the command stops at its next
 * step and stops the server as at its end, exiting with the shell's code for
 * the signal. A second signal exits at once.
 */
const stopSignal: { code: number | null } = { code: null };
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    if (stopSignal.code !== null) {
      process.stderr.write('stopped at once: an embedded PostgreSQL this command started may be left running\n');
      process.exit(code);
    }
    stopSignal.code = code;
    process.stderr.write('stopping: the command ends at its next step, then the embedded PostgreSQL stops\n');
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
