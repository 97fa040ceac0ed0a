import { PassThrough } from 'node:stream';

export interface CapturedLog {
  /** Give this to the service as its log destination (`withApp(env, { logTo: log.stream })`). */
  stream: NodeJS.WritableStream;
  /** Every JSON line written so far, parsed. */
  lines: Array<Record<string, unknown>>;
  /** Everything written so far, as written. */
  text(): string;
}

/** The service's log lines, kept in memory for a suite to assert on. */
export function captureLog(): CapturedLog {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  let raw = '';
  let partial = '';
  stream.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    raw += text;
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { stream, lines, text: () => raw };
}
