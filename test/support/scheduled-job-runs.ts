import assert from 'node:assert/strict';
import { internalApi } from './http-client';
import type { TestService } from './test-service';

/** `scheduled_job_runs_total` of one instance, by job, read from its metrics. */
export async function scheduledJobRuns(service: TestService): Promise<Map<string, number>> {
  const scraped = await internalApi(service)('GET', '/internal/metrics');
  assert.equal(scraped.status, 200);
  const runs = new Map<string, number>();
  for (const [, job = '', count] of scraped.text.matchAll(/^scheduled_job_runs_total\{task="([^"]+)"\} (\d+)$/gm)) {
    runs.set(job, Number(count));
  }
  return runs;
}
