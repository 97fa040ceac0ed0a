import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { freeLoopbackPort } from '../../libs/net/free-port';

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:<port>` of its (public) listener. */
  readonly url: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

/**
 * A server in its own process, so its CPU and memory are its own in /proc.
 * Its output goes to `logFile` rather than a pipe: a request log line per
 * request would otherwise cost the load generator (this process) reading
 * it. Resolves once the output says `Ready in`.
 */
export async function startServerProcess(options: {
  script: string;
  env: Record<string, string>;
  logFile: string;
  nodeFlags?: string[];
  readyTimeoutMs?: number;
}): Promise<ServerProcess> {
  const port = options.env['PORT'] ?? String(await freeLoopbackPort());
  const output = openSync(options.logFile, 'a');
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), options.script], {
    env: { ...process.env, ...options.env, HOST: '127.0.0.1', PORT: port },
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const log = (): string => readFileSync(options.logFile, 'utf8');
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  while (!log().includes('Ready in')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.script} did not start:\n${log().slice(-4000)}`);
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  return {
    child,
    pid: child.pid ?? 0,
    url: `http://127.0.0.1:${port}`,
    logFile: options.logFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
