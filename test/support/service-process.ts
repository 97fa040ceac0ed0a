import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { freeLoopbackPort } from '../../libs/net/free-port';

export interface ServiceProcess {
  child: ChildProcess;
  publicUrl: string;
  adminUrl: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  exited: Promise<number | null>;
}

/**
 * `node dist/src/main.js` as production runs it, on loopback (unless
 * `HOST`/`ADMIN_HOST` are given) and free ports (unless `PORT`/`ADMIN_PORT`
 * are given); resolves once it prints that it is ready.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  options: StartOptions = {},
): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(env, options);
    } catch (error) {
      // A port found free can be taken by a parallel test before the service binds it: pick again.
      const portsChosenHere = env['PORT'] === undefined || env['ADMIN_PORT'] === undefined;
      if (!portsChosenHere || attempt >= 3 || !String(error).includes('EADDRINUSE')) throw error;
    }
  }
}

interface StartOptions {
  echo?: boolean;
  readyTimeoutMs?: number;
  /**
   * For a start expected never to get ready: stops waiting (and the service)
   * as soon as its output satisfies this, instead of at the ready timeout.
   * The start then fails as a timed-out one does, with the output so far.
   */
  giveUpWhen?: (output: string) => boolean;
  nodeFlags?: string[];
  /** The compiled entry point, when the service runs from another application folder. */
  entry?: string;
  /** Runs the service as this OS user (the test runner is root). */
  user?: { uid: number; gid: number };
  /** Working folder of the service (one its OS user can enter). */
  cwd?: string;
  /** Leads a process group of its own, as a shell's job does: `process.kill(-pid, signal)` reaches it and its children. */
  processGroup?: boolean;
}

async function startOnce(env: Record<string, string>, options: StartOptions): Promise<ServiceProcess> {
  const port = env['PORT'] ?? String(await freeLoopbackPort());
  const adminPort = env['ADMIN_PORT'] ?? String(await freeLoopbackPort());
  const child = spawn(
    process.execPath,
    [...(options.nodeFlags ?? []), options.entry ?? resolve(__dirname, '..', '..', 'src', 'main.js')],
    {
      ...(options.user ?? {}),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.processGroup === true ? { detached: true } : {}),
      env: {
        ...process.env,
        ...env,
        HOST: env['HOST'] ?? '127.0.0.1',
        PORT: port,
        ADMIN_HOST: env['ADMIN_HOST'] ?? '127.0.0.1',
        ADMIN_PORT: adminPort,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let output = '';
  /** What it wrote to stderr alone: a failed start must say why there, whatever the log level. */
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  await new Promise<void>((ready, fail) => {
    // Once ready or given up, later output is only kept (for output()), not looked at again.
    let settled = false;
    // A service that never gets ready is stopped: the caller has no handle on it to stop it with.
    const giveUp = (): void => {
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      fail(new Error(`service did not start:\n${output}`));
    };
    const timer = setTimeout(giveUp, options.readyTimeoutMs ?? 60_000);
    const read = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (options.echo === true) process.stderr.write(chunk);
      if (settled) return;
      if (output.includes('Ready in')) {
        settled = true;
        clearTimeout(timer);
        ready();
      } else if (options.giveUpWhen?.(output) === true) {
        giveUp();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`service exited with ${code}:\n${output}\nstderr alone:\n${errors}`));
    });
  });
  return {
    child,
    publicUrl: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    output: () => output,
    exited,
  };
}
