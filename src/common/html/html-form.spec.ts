import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inLabelWords, unstorableFormProblem } from './html-form';

describe('a form’s refusal in the words of its labels', () => {
  const labels = {
    'lineItems.0.quantity': 'Quantity',
    totalAmountMinor: 'Total amount',
    startTime: 'Start',
    quantity: 'Quantity of the order',
  };

  it('names each field by its label instead of the JSON API’s path, in every sentence of the message', () => {
    assert.equal(
      inLabelWords(
        'lineItems.0.quantity must be an integer number; totalAmountMinor must be an integer number.',
        labels,
      ),
      'Quantity must be an integer number; Total amount must be an integer number.',
    );
    assert.equal(inLabelWords('endTime must not be before startTime.', labels), 'endTime must not be before Start.');
  });

  it('replaces a path only whole: never inside a longer path, nor a path’s tail', () => {
    assert.equal(inLabelWords('lineItems.1.quantity is too large', labels), 'lineItems.1.quantity is too large');
    assert.equal(inLabelWords('startTimeZone is unknown', labels), 'startTimeZone is unknown');
    assert.equal(inLabelWords('startTime.value is unknown', labels), 'startTime.value is unknown');
  });

  it('leaves a message without labels as it is', () => {
    assert.equal(
      inLabelWords('title.EN must be at most 10000 characters.', {}),
      'title.EN must be at most 10000 characters.',
    );
  });
});

describe('a posted form’s text', () => {
  it('refuses a NUL or a lone surrogate in any field, a repeated one included, naming the field', () => {
    assert.match(unstorableFormProblem({ name: 'a\u0000b' }) ?? '', /^The form field name must not contain the NUL/);
    assert.match(
      unstorableFormProblem({ scopes: ['events:read', '\ud800'] }) ?? '',
      /^The form field scopes .*surrogate/,
    );
    assert.match(unstorableFormProblem({ 'x\u0000': '\u0000' }) ?? '', /^A form field must not contain the NUL/);
  });

  it('takes any other text, and no body at all', () => {
    assert.equal(unstorableFormProblem({ name: 'Zoë 🎉', scopes: ['events:read'] }), null);
    assert.equal(unstorableFormProblem(undefined), null);
  });
});
