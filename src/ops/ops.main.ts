import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { PinoNestLogger } from '../common/logging/logger';
import { AppModule } from '../app.module';
import { ConfigError, loadAppConfig } from '../config/app-config';
import { DomainError } from '../common/errors/domain-error';
import { RouteTable } from '../common/http/route-table';
import { withEmbeddedDefault } from '../database/with-embedded-default';
import { parseOpsArguments, OpsUsageError } from './ops-arguments';
import { OPS_COMMANDS } from './ops-commands';

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function usage(): string {
  return Object.entries(OPS_COMMANDS)
    .map(([name, command]) => `  npm run ops -- ${name} ${command.usage}`)
    .join('\n');
}

/** `npm run ops -- <command> [--flag value ...]`: boots the services without HTTP and runs one command. */
async function main(): Promise<number> {
  const args = parseOpsArguments(process.argv.slice(2));
  const command = args.command === undefined ? undefined : OPS_COMMANDS[args.command];
  if (command === undefined) {
    process.stderr.write(`usage:\n${usage()}\n`);
    return 2;
  }
  const { config, embedded } = await withEmbeddedDefault(
    { ...loadAppConfig(), runBackgroundWork: false, logLevel: 'warn' },
    () => undefined,
  );
  // stdout carries only the command's JSON; the service's own warnings go to stderr.
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, new RouteTable()), {
    logger: new PinoNestLogger(pino({ level: 'warn' }, pino.destination(2))),
  });
  try {
    print({ data: await command.run(app, args) });
    return 0;
  } catch (error) {
    if (error instanceof DomainError) {
      print({ error: error.code, message: error.message });
      return 1;
    }
    if (error instanceof OpsUsageError || error instanceof SyntaxError) {
      process.stderr.write(
        `${args.command}: ${error.message}\nusage: npm run ops -- ${args.command} ${command.usage}\n`,
      );
      return 2;
    }
    throw error;
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
