import { startRoundRobinProxy } from '../../test/support/round-robin-proxy';

/**
 * The test rig's round-robin proxy as a process of its own (`node
 * dist/bench/support/proxy-process.js`), so that a benchmark measures it
 * apart from its load generator, which would otherwise share its one thread.
 * Settings: BACKENDS (comma-separated base URLs) and PORT. Prints `Ready in`
 * like the service, so bench/support/server-process.ts can start it.
 */
async function main(): Promise<void> {
  const started = performance.now();
  const backends = (process.env['BACKENDS'] ?? '').split(',').filter((backend) => backend !== '');
  if (backends.length === 0) throw new Error('BACKENDS must name at least one base URL');
  const proxy = await startRoundRobinProxy(backends, { port: Number(process.env['PORT'] ?? 0) });
  const stop = (): void => void proxy.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(
    `proxy on ${proxy.url} to ${backends.join(', ')}: Ready in ${Math.round(performance.now() - started)} ms\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
