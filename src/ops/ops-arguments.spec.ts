import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  flagsOfUsage,
  isHelpRequest,
  OpsUsageError,
  parseOpsArguments,
  refuseUnknownFlags,
  switchFlag,
} from './ops-arguments';

describe('the ops CLI’s arguments', () => {
  it('answers help, --help and -h alone with the usage', () => {
    for (const argv of [['help'], ['--help'], ['-h']]) assert.ok(isHelpRequest(argv), argv[0]);
    assert.ok(!isHelpRequest(['organisers:list']));
    assert.ok(!isHelpRequest(['organisers:create', '--help']));
  });

  it('knows a command’s flags from its usage', () => {
    assert.deepEqual(
      [...flagsOfUsage('--account <organiserId|venueId> [--read-only] [--ttl <60..3600 seconds>]')],
      ['account', 'read-only', 'ttl'],
    );
  });

  it('refuses a flag the usage does not name', () => {
    const args = parseOpsArguments(['portal:link', '--account', 'org_1', '--readonly']);
    assert.throws(() => refuseUnknownFlags(args, '--account <id> [--read-only]'), /unknown flag --readonly/);
    assert.doesNotThrow(() => refuseUnknownFlags(parseOpsArguments(['x', '--read-only']), '[--read-only]'));
  });

  it('reads an on/off flag alone or as true/false, and refuses any other value', () => {
    const read = (...argv: string[]) => switchFlag(parseOpsArguments(['x', ...argv]), 'force');
    assert.equal(read(), false);
    assert.equal(read('--force'), true);
    assert.equal(read('--force', 'true'), true);
    assert.equal(read('--force', 'false'), false);
    assert.throws(() => read('--force', 'yes'), OpsUsageError);
  });

  it('refuses a word that is no flag’s value as a usage error naming it, as it refuses an unknown flag', () => {
    const args = parseOpsArguments(['organisers:list', 'stray']);
    assert.throws(
      () => refuseUnknownFlags(args, ''),
      (error: unknown) => error instanceof OpsUsageError && error.message === 'unexpected argument "stray"',
    );
    const split = parseOpsArguments(['organisers:create', '--name', 'Acme', 'Events']);
    assert.equal(split.flags.get('name'), 'Acme');
    assert.throws(() => refuseUnknownFlags(split, '--name <name> [--placeholder]'), /unexpected argument "Events"/);
  });
});
