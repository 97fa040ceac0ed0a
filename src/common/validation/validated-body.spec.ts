import 'reflect-metadata';
import { Body, Controller, Param, Post, Query } from '@nestjs/common';
import { IsString } from 'class-validator';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unvalidatedInputsOf, ValidatedBody } from './validated-body';

class NamedDto {
  @IsString() name!: string;
}

@Controller('internal/probe')
class CheckedController {
  @Post(':probeId')
  create(@Param('probeId') _probeId: string, @ValidatedBody() _body: NamedDto, @Query() _query: object): void {}
}

@Controller('internal/probe')
class BareBodyController {
  @Post()
  create(@Body() _body: NamedDto): void {}
}

@Controller('internal/probe')
class NumericParamController {
  @Post(':probeId')
  create(@Param('probeId') _probeId: number, @ValidatedBody() _body: NamedDto): void {}
}

describe('unvalidatedInputsOf (start-up refuses what it finds)', () => {
  it('finds nothing when every body goes through @ValidatedBody() and path and query values are text', () => {
    assert.deepEqual(unvalidatedInputsOf([CheckedController]), []);
  });

  it('names a bare @Body(): without the global pipe it would reach the handler unchecked (fail closed)', () => {
    assert.deepEqual(unvalidatedInputsOf([BareBodyController]), [
      'BareBodyController.create: @Body() without @ValidatedBody()',
    ]);
  });

  it('names a path value declared as a number: no pipe converts path or query values any more', () => {
    assert.deepEqual(unvalidatedInputsOf([NumericParamController]), [
      'NumericParamController.create: a path or query value declared as Number, not text',
    ]);
  });
});
