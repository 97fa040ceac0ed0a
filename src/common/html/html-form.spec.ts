import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inLabelWords } from './html-form';

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
