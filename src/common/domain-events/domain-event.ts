/**
 * A fact one context tells the others. Small and immutable: ids, an
 * occurred-at time and the trace of the work that made it true, never
 * entities. Each class has a static `type` string.
 */
export interface DomainEvent {
  readonly type: string;
  readonly occurredAt: Date;
  /** W3C trace id of the request (or operation) that made the fact true: the webhooks it causes continue it. */
  readonly traceId: string;
}
