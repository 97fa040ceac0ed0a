import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '../libs/keys/api-key-format';
import { FORM_BODY_LIMIT, parseFormBody, parseJsonBody } from '../src/common/http/json-body';
import { benchEnvironment, runWhenExecuted } from './support/bench-environment';

/**
 * The worst 1 MiB bodies we could construct, against the one body parser:
 * - parse CPU: the server-side work on each body (read bytes → value or
 *   refusal), measured by calling the parser directly, median of 15 runs;
 * - HTTP: each body sent to POST /v1/events (the route with the full
 *   BODY_LIMIT_BYTES), its status, wall time and process CPU (client and
 *   server both run in this process, so the CPU is an upper bound);
 * - interference: GET /v1/me latency while 1, then 4, senders (in a worker
 *   thread) post the worst body in a loop, against the same GET alone;
 * - forms: parse CPU of the worst 16 KiB urlencoded forms the portal reads
 *   before any session is checked (one name repeated, distinct names).
 * Prints one JSON line.
 */
const ORGANISER = 'org_000000000000000000bench';
const LIMIT = 1024 * 1024;

function fill(prefix: string, unit: (index: number) => string, suffix: string, separator = ','): string {
  const parts: string[] = [];
  let size = prefix.length + suffix.length;
  for (let index = 0; ; index += 1) {
    const next = unit(index);
    if (size + next.length + separator.length > LIMIT) break;
    parts.push(next);
    size += next.length + separator.length;
  }
  return `${prefix}${parts.join(separator)}${suffix}`;
}

function bodies(): Record<string, string> {
  const depth = (LIMIT - 8) / 2;
  return {
    deepArrays: `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`.slice(0, LIMIT),
    deepObjects: `${'{"a":'.repeat(LIMIT / 6 - 1)}0${'}'.repeat(LIMIT / 6 - 1)}`,
    manyKeys: fill('{', (index) => `"k${index}":0`, '}'),
    manyLongKeys: fill('{', (index) => `"${index}${'k'.repeat(90)}":0`, '}'),
    manyValues: fill('{"a":[', () => '0', ']}'),
    manyEmptyObjects: fill('{"a":[', () => '{}', ']}'),
    manyObjectsWithProto: fill('{"__proto__":{},"a":[', () => '{"constructor":{"prototype":{}}}', ']}'),
    escapedLongString: fill('{"a":"', () => '\\u00e9', '"}', ''),
    loneSurrogateEscapes: fill('{"a":"', () => '\\ud800', '"}', ''),
    hugeNumbers: fill('{"a":[', () => '1e999999', ']}'),
    manyStringsAtCap: fill('{"a":[', () => `"${'x'.repeat(9_999)}"`, ']}'),
  };
}

async function seed(db: DataSource, key: string): Promise<void> {
  await db.query(`INSERT INTO organiser (id, name) VALUES ($1, 'Benchmark Organiser')`, [ORGANISER]);
  await db.query(
    `INSERT INTO api_key (id, key_hash, key_prefix, principal_type, principal_id, scopes, created_by_role)
     VALUES ('key_bench', $1, 'svc_live_bench', 'organiser', $2, '{events:read,events:write}', 'owner')`,
    [hashApiKey(key), ORGANISER],
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) * 100) / 100;
}

function parseCpuMs(body: Buffer, parse: (body: Buffer) => unknown = parseJsonBody): number {
  const runs: number[] = [];
  for (let run = 0; run < 15; run += 1) {
    const before = process.cpuUsage();
    try {
      parse(body);
    } catch {
      // Refusals are the expected outcome; only the cost matters here.
    }
    const used = process.cpuUsage(before);
    runs.push((used.user + used.system) / 1000);
  }
  return median(runs);
}

/** The form parser's cost on the largest forms it takes: one name repeated, and as many distinct names. */
function formParseCpuMs(): Record<string, number> {
  const parse = (body: Buffer): unknown => parseFormBody(body.toString('utf8'));
  const repeats = Buffer.from(`${'a&'.repeat(FORM_BODY_LIMIT / 2 - 1)}a`);
  const distinct = Buffer.from(fill('', (index) => `k${index}=`, '', '&').slice(0, FORM_BODY_LIMIT));
  return { oneNameRepeated: parseCpuMs(repeats, parse), distinctNames: parseCpuMs(distinct, parse) };
}

export async function main(): Promise<void> {
  const key = generateApiKey();
  const environment = await benchEnvironment((db) => seed(db, key));
  try {
    const base = environment.service.publicUrl;
    const post = (body: string): Promise<Response> =>
      fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'bench' },
        body,
      });
    const me = async (): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      assert.equal(response.status, 200);
      return performance.now() - started;
    };

    const results: Record<
      string,
      { bytes: number; parseCpuMs: number; status: number; httpMs: number; httpCpuMs: number }
    > = {};
    for (const [name, body] of Object.entries(bodies())) {
      const bytes = Buffer.byteLength(body);
      assert.ok(bytes <= LIMIT, `${name} is ${bytes} bytes`);
      const parseCpu = parseCpuMs(Buffer.from(body));
      await post(body); // warm-up
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const response = await post(body);
      await response.arrayBuffer();
      const httpMs = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      assert.ok(response.status < 500, `${name} answered ${response.status}`);
      results[name] = {
        bytes,
        parseCpuMs: parseCpu,
        status: response.status,
        httpMs: Math.round(httpMs * 10) / 10,
        httpCpuMs: Math.round((cpu.user + cpu.system) / 100) / 10,
      };
    }
    const worst = Object.entries(results).sort((a, b) => b[1].parseCpuMs - a[1].parseCpuMs)[0]?.[0] ?? 'deepArrays';
    const worstBody = bodies()[worst] ?? '';

    /** GET /v1/me latencies while `senders` loops post the worst body. */
    const whileSending = async (senders: number): Promise<number[]> => {
      // The senders run in a worker thread: building and sending 1 MiB bodies is client work, not the server's.
      const worker = new Worker(
        `const { workerData, parentPort } = require('node:worker_threads');
         let sending = true;
         parentPort.on('message', () => { sending = false; });
         const loop = async () => {
           while (sending) {
             const response = await fetch(workerData.url, { method: 'POST', headers: workerData.headers, body: workerData.body });
             await response.arrayBuffer();
           }
         };
         Promise.all(Array.from({ length: workerData.senders }, loop)).then(() => process.exit(0));`,
        {
          eval: true,
          workerData: {
            url: `${base}/v1/events`,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'bench' },
            body: worstBody,
            senders,
          },
        },
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const latencies: number[] = [];
      for (let index = 0; index < 60; index += 1) latencies.push(await me());
      worker.postMessage('stop');
      await new Promise((resolve) => worker.once('exit', resolve));
      return latencies;
    };
    const alone: number[] = [];
    for (let index = 0; index < 60; index += 1) alone.push(await me());
    const contended: Record<string, number[]> = {};
    for (const count of [1, 4]) contended[`${count}`] = await whileSending(count);

    const p = (values: number[], q: number): number => {
      const sorted = [...values].sort((a, b) => a - b);
      return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
    };
    process.stdout.write(
      `${JSON.stringify({
        bench: 'hostile-body',
        bodies: results,
        worstBody: worst,
        formParseCpuMs: formParseCpuMs(),
        getMeAloneMs: { p50: p(alone, 0.5), p95: p(alone, 0.95), max: p(alone, 1) },
        getMeWhileSendingWorstMs: Object.fromEntries(
          Object.entries(contended).map(([senders, values]) => [
            `${senders} sender(s)`,
            {
              p50: p(values, 0.5),
              p95: p(values, 0.95),
              max: p(values, 1),
              addedP50: Math.round((p(values, 0.5) - p(alone, 0.5)) * 10) / 10,
              addedP95: Math.round((p(values, 0.95) - p(alone, 0.95)) * 10) / 10,
            },
          ]),
        ),
      })}\n`,
    );
  } finally {
    await environment.close();
  }
}

runWhenExecuted(module, main);
