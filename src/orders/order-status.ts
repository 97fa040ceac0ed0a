/** Order statuses, as the contract names them; only `confirmed` is ever visible through the public API. */
export const ORDER_STATUSES = ['pending', 'confirmed', 'failed', 'abandoned'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
