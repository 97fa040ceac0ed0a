import { Global, Module } from '@nestjs/common';
import { KeysetPager } from './keyset-pager';

@Global()
@Module({ providers: [KeysetPager], exports: [KeysetPager] })
export class PaginationModule {}
