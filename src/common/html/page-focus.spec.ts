import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PageFocus } from './page-focus';

describe('the focus of a page with a refused form', () => {
  it('goes to the first field refused with a message, and to no later one', () => {
    const focus = new PageFocus();
    assert.equal(focus.invalid('name', null), '');
    assert.equal(focus.isTaken(), false);
    assert.equal(
      focus.invalid('name', 'Give it a name.'),
      'aria-invalid="true" aria-describedby="name-error" autofocus',
    );
    assert.equal(focus.invalid('zone', 'Unknown zone.'), 'aria-invalid="true" aria-describedby="zone-error"');
    assert.equal(focus.claim('A form message.'), '');
    assert.equal(focus.isTaken(), true);
  });

  it('writes an id into the attribute as text', () => {
    assert.equal(
      new PageFocus().invalid('a"b<', 'x'),
      'aria-invalid="true" aria-describedby="a&quot;b&lt;-error" autofocus',
    );
  });
});
