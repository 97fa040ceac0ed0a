/** The two facts a ticket holder bought into: when and where. */
export interface EventWhenAndWhere {
  startTime: Date | null;
  locationId: string | null;
}

function sameInstant(a: Date | null, b: Date | null): boolean {
  if (a === null || b === null) return a === b;
  return a.getTime() === b.getTime();
}

/**
 * Buyers are offered a refund only when the organiser asked for it with the
 * literal `true` (not `"true"` or `1`, which an untyped client might send by
 * accident) and the save really moved the date or the venue. Any other edit,
 * such as a new title, changes nothing a buyer relied on. Instants are compared
 * by value, because the stored and the patched Date are never the same object.
 */
export function shouldCreateRefundOffer(
  before: EventWhenAndWhere,
  after: EventWhenAndWhere,
  refundOfferOnChange: boolean | undefined,
): boolean {
  if (refundOfferOnChange !== true) return false;
  return !sameInstant(before.startTime, after.startTime) || before.locationId !== after.locationId;
}
