import assert from 'node:assert/strict';
import { relative } from 'node:path';
import { describe, it } from 'node:test';
import { selectTests } from './test-selection';

describe('selectTests (the name parts given to run-tests.js)', () => {
  const root = '/work/portal-fix/dist';
  const files = [
    `${root}/test/portal.e2e-spec.js`,
    `${root}/test/start.e2e-spec.js`,
    `${root}/src/webhooks/webhook-subscription.repository.spec.js`,
  ];
  const projectPathOf = (file: string): string => relative(root, file);

  it('matches a name part against the file’s path inside the project, never the checkout’s path', () => {
    assert.deepEqual(selectTests(files, { projectPathOf, nameParts: ['portal'], unitOnly: false }), [files[0]]);
    assert.deepEqual(selectTests(files, { projectPathOf, nameParts: ['test/start.e2e'], unitOnly: false }), [files[1]]);
    assert.deepEqual(selectTests(files, { projectPathOf, nameParts: [], unitOnly: false }), files);
  });

  it('takes no e2e file with --unit', () => {
    assert.deepEqual(selectTests(files, { projectPathOf, nameParts: [], unitOnly: true }), [files[2]]);
  });
});
