import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { embeddedPgHome } from '../src/config/app-config';
import { openEmbeddedDefault } from '../src/database/embedded-default';

const portOf = (url: string): number => Number(new URL(url).port);

describe("the embedded default's server", () => {
  const workFolder = mkdtempSync(join(tmpdir(), 'events-api-embedded-'));
  // Ours to open: the cluster stays in the data folder (start.e2e-spec.ts says why).
  chmodSync(workFolder, 0o755);
  after(() => rmSync(workFolder, { recursive: true, force: true }));

  it("keeps the port of its data folder's last server across restarts while it is free, and takes another when it is taken", async () => {
    const dataDir = join(workFolder, 'port');
    const open = () => openEmbeddedDefault(dataDir, embeddedPgHome(process.env), () => undefined);
    const first = await open();
    await first.stop();
    const again = await open();
    try {
      assert.equal(portOf(again.url), portOf(first.url), 'the same port after a restart');
      assert.equal(readFileSync(join(dataDir, 'pg-url'), 'utf8').trim(), first.url, 'pg-url unchanged');
    } finally {
      await again.stop();
    }
    const holder = createServer();
    await new Promise<void>((listening) => holder.listen(portOf(first.url), '127.0.0.1', listening));
    try {
      const moved = await open();
      await moved.stop();
      assert.notEqual(portOf(moved.url), (holder.address() as AddressInfo).port, 'a port taken meanwhile is not used');
    } finally {
      await new Promise((closed) => holder.close(closed));
    }
  });
});
