import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { KeysetPager } from '../../src/common/pagination/keyset-pager';
import { dataSourceOptions } from '../../src/database/data-source-options';
import type { ServiceSettings } from '../../src/database/service-settings';
import { Database } from '../../src/database/sql/sql-target';
import { UnitOfWork } from '../../src/database/unit-of-work';
import { freshDatabase } from './test-database';

/** What a repository spec builds its repository from: a fresh migrated database, and the parts Nest would inject. */
export interface RepositoryDatabase {
  dataSource: DataSource;
  database: Database;
  unitOfWork: UnitOfWork;
  pager: KeysetPager;
  close(): Promise<void>;
}

/** A fresh migrated database of its own (with the service's entities), for a spec beside a repository. */
export async function repositoryDatabase(): Promise<RepositoryDatabase> {
  const dataSource = new DataSource({ ...dataSourceOptions(await freshDatabase()), extra: { max: 4 } });
  await dataSource.initialize();
  const database = new Database(dataSource);
  const key = randomBytes(32).toString('hex');
  const pager = new KeysetPager({ cursorSigningKey: async () => key } as unknown as ServiceSettings, database);
  await pager.onModuleInit();
  return { dataSource, database, unitOfWork: new UnitOfWork(dataSource), pager, close: () => dataSource.destroy() };
}
