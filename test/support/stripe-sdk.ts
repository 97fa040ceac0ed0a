/**
 * Stripe's SDK, for the tests that check our signatures with its
 * `webhooks.constructEvent`. It is loaded without its type declarations:
 * they are about 146,000 lines, four in ten of all the lines the type-check
 * and the linter parse, for one function.
 */
export interface StripeSdk {
  webhooks: { constructEvent(payload: Buffer | string, header: string, secret: string): unknown };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- untyped on purpose, see above
const Stripe = require('stripe') as new (apiKey: string) => StripeSdk;

/** A client that never calls Stripe: constructEvent verifies locally. */
export function stripeSdk(): StripeSdk {
  return new Stripe('sk_test_unused');
}
