import 'reflect-metadata';
import { PATH_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { IsString } from 'class-validator';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseJsonBody } from '../http/json-body';
import { handlerInputsOf, unvalidatedInputsOf } from './validated-body';
import { createValidationPipe } from './validation.pipe';

class NamedDto {
  @IsString() name!: string;
}

type Controller = (new (...args: never[]) => unknown) & { name: string };

function controllerFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return controllerFiles(path);
    return name.endsWith('.controller.js') ? [path] : [];
  });
}

function controllers(): Controller[] {
  const source = join(__dirname, '..', '..');
  return controllerFiles(source).flatMap((file) =>
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- every compiled controller, found by name
    Object.values(require(file) as Record<string, unknown>).filter(
      (value): value is Controller => typeof value === 'function' && Reflect.hasMetadata(PATH_METADATA, value),
    ),
  );
}

describe('public write bodies are validated as plain objects, never through class-transformer', () => {
  it('finds the controllers (the scan itself works)', () => {
    const names = controllers().map((controller) => controller.name);
    assert.ok(names.includes('WebhooksController') && names.includes('EventsController'), names.join(', '));
  });

  it('takes every body of every controller through the body pipe (start-up refuses the service otherwise)', () => {
    assert.deepEqual(unvalidatedInputsOf(controllers()), []);
  });

  it('gives no public controller a @Body parameter of a class type', () => {
    for (const controller of controllers()) {
      const path = String(Reflect.getMetadata(PATH_METADATA, controller));
      if (path.replace(/^\//, '').startsWith('internal')) continue;
      for (const { where, kind, type } of handlerInputsOf([controller])) {
        if (kind === String(RouteParamtypes.BODY))
          assert.equal(type, Object, `${where} declares a class body (${String(type)})`);
      }
    }
  });

  it('refuses (fails closed) to class-transform a body that was not parsed for an internal route', async () => {
    const pipe = createValidationPipe();
    await assert.rejects(
      pipe.transform(parseJsonBody(Buffer.from('{"name":"x"}')), { type: 'body', metatype: NamedDto }),
      /NamedDto body outside an internal route/,
    );
    await assert.rejects(pipe.transform({ name: 'x' }, { type: 'body', metatype: NamedDto }), /outside an internal/);
  });

  it('passes plain-object bodies through untouched', async () => {
    const pipe = createValidationPipe();
    const body = { name: 'x', extra: { nested: true } };
    assert.equal(await pipe.transform(body, { type: 'body', metatype: Object }), body);
  });
});
