import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';

const PLAINTEXT = { WEBHOOK_SECRETS_PLAINTEXT: '1' };

describe('DATABASE_URL', () => {
  it('takes every connection string form node-postgres reads', () => {
    for (const url of [
      'postgres://service:secret@db.example.com:5432/events',
      'postgresql://service@db.example.com/events?sslmode=require',
      'postgres://service@/events?host=/var/run/postgresql',
      'postgres://service@%2Fvar%2Frun%2Fpostgresql/events',
      'socket:/var/run/postgresql?db=events',
      '/var/run/postgresql events',
    ]) {
      assert.equal(loadAppConfig({ ...PLAINTEXT, DATABASE_URL: url }).databaseUrl, url, url);
    }
  });

  it('refuses at start a DATABASE_URL that is not a PostgreSQL connection string, without printing its password', () => {
    for (const bad of [
      'events',
      'http://db.example.com/events',
      'postgress://u:hunter2@db/events',
      'db.example.com:5432',
    ]) {
      assert.throws(
        () => loadAppConfig({ ...PLAINTEXT, DATABASE_URL: bad }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith('DATABASE_URL must be a PostgreSQL connection string') &&
          !error.message.includes('hunter2'),
        bad,
      );
    }
  });
});
