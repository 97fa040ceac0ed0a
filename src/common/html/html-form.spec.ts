import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inLabelWords, refusalByField, unstorableFormProblem } from './html-form';

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

describe('a form’s refusal beside the fields it is about', () => {
  const paths = {
    'lineItems.0.quantity': 'quantity',
    lineItems: 'quantity',
    totalAmountMinor: 'totalAmountMinor',
    currency: 'currency',
  };
  const labels = { 'lineItems.0.quantity': 'Quantity', lineItems: 'Quantity', totalAmountMinor: 'Total amount' };

  it('gives each part of a joined refusal to the field whose path it starts with, in the words of its label', () => {
    assert.deepEqual(
      refusalByField(
        'lineItems.0.quantity must be an integer number; totalAmountMinor must be an integer number; currency must be a three-letter ISO 4217 code.',
        paths,
        labels,
      ),
      {
        fields: {
          quantity: 'Quantity must be an integer number.',
          totalAmountMinor: 'Total amount must be an integer number.',
          currency: 'currency must be a three-letter ISO 4217 code.',
        },
        form: null,
      },
    );
  });

  it('says at the form’s top what starts with no path of the form, and keeps a part’s reason with the part before it', () => {
    assert.deepEqual(refusalByField('The line items add up to a quantity that is too large.', paths, labels), {
      fields: {},
      form: 'The line items add up to a quantity that is too large.',
    });
    assert.deepEqual(refusalByField('totalAmountMinor is too large; nothing was changed.', paths, labels), {
      fields: { totalAmountMinor: 'Total amount is too large; nothing was changed.' },
      form: null,
    });
  });

  it('takes a path only whole at the start: a longer path, or one named later in a sentence, is not it', () => {
    assert.deepEqual(refusalByField('lineItems.1.quantity must be an integer number.', paths, labels), {
      fields: {},
      form: 'lineItems.1.quantity must be an integer number.',
    });
    assert.deepEqual(refusalByField('currencyCode is unknown; the total needs a currency.', paths, labels), {
      fields: {},
      form: 'currencyCode is unknown; the total needs a currency.',
    });
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
