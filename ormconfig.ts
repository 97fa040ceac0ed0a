import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

/**
 * The DataSource the TypeORM CLI uses (`npm run migration:run`). It needs
 * `DATABASE_URL`; the service itself also runs pending migrations at start.
 */
const url = process.env['DATABASE_URL'];
if (url === undefined || url === '') {
  throw new Error(
    'Set DATABASE_URL to run TypeORM CLI commands: on the embedded default, with the service running, ' +
      'DATABASE_URL=$(cat .data/pg-url) npm run migration:run',
  );
}

export default new DataSource(dataSourceOptions(url));
