import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const OPS = join(__dirname, '..', '..', 'src', 'ops', 'ops.main.js');

export interface OpsResult {
  code: number;
  /** The command's JSON on stdout; undefined when it printed nothing. */
  json: any;
  stderr: string;
}

/** One `npm run ops -- <args>` as a user runs it (the compiled CLI in its own process), with `env`. */
export async function runOps(args: string[], env: NodeJS.ProcessEnv): Promise<OpsResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [OPS, ...args], { env });
    return { code: 0, json: JSON.parse(stdout), stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return {
      code: failed.code,
      json: failed.stdout === '' ? undefined : JSON.parse(failed.stdout),
      stderr: failed.stderr,
    };
  }
}
