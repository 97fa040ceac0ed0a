/**
 * A fact one context tells the others. Small and immutable: ids and an
 * occurred-at time, never entities. Each class has a static `type` string.
 */
export interface DomainEvent {
  readonly type: string;
  readonly occurredAt: Date;
}
