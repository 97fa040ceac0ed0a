import { Injectable } from '@nestjs/common';
import {
  DIRECTLY_STORED_FIELDS,
  calendarDayIn,
  hasWritableFields,
  isPublishable,
  isValidTimeZone,
  noonInTimeZone,
  NoonOutOfRange,
  normaliseAdditionalLocationIds,
  parseEventPatch,
  shouldCreateRefundOffer,
  type EventPatch,
  type EventPatchMode,
  type Visibility,
} from '../../libs/event-rules';
import { newResourceId } from '../../libs/ids/resource-id';
import { EARLIEST_INSTANT_MS, LATEST_INSTANT_MS } from '../../libs/time/instant';
import type { AuthContext, Principal } from '../common/auth-context/access';
import { DomainEventBus } from '../common/domain-events/domain-event-bus';
import { SerializedBody, type Page } from '../common/envelope/page';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { entityTagOfJson, ifMatchMatches } from '../common/http/entity-tag';
import type { PageRequest } from '../common/pagination/page-request';
import { UnitOfWork, type Transaction } from '../database/unit-of-work';
import { EventPublishedDomainEvent } from './domain-events/event-published.domain-event';
import type { EventResponseDto, InternalEventResponse } from './dto/event.dto';
import { EventEntity } from './entities/event.entity';
import { EventPresenter } from './event.presenter';
import { EventRepository, type LockedEvent, type WrittenEvent } from './event.repository';
import { IdempotencyService, type IdempotentOutcome } from './idempotency/idempotency.service';
import type { RequestContext } from '../common/request-id/request-context';
import { OrganisersService } from '../identity/organisers.service';
import { VenuesService } from '../venues/venues.service';

export interface TaggedEvent {
  event: EventResponseDto;
  /** `{data: event}` serialised once: the bytes sent, and the bytes the ETag is computed over. */
  body: SerializedBody;
  etag: string;
}

function parseOrThrow(body: unknown, mode: EventPatchMode): EventPatch {
  const result = parseEventPatch(body, mode);
  if (!result.ok) {
    throw new DomainError(
      result.code === 'forbidden' ? ErrorCode.Forbidden : ErrorCode.InvalidArgument,
      `${result.message}.`,
    );
  }
  return result.patch;
}

/** The ETag of an event is computed over the exact body `GET /v1/events/{id}` sends. */
function tagged(event: EventResponseDto): TaggedEvent {
  const body = SerializedBody.enveloped(event);
  return { event, body, etag: entityTagOfJson(body.json) };
}

@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventRepository,
    private readonly presenter: EventPresenter,
    private readonly unitOfWork: UnitOfWork,
    private readonly bus: DomainEventBus,
    private readonly idempotency: IdempotencyService,
    private readonly organisers: OrganisersService,
    private readonly venues: VenuesService,
  ) {}

  async list(principal: Principal, request: PageRequest): Promise<Page<EventResponseDto>> {
    const page = await this.events.pageVisibleTo(principal, request);
    return page.map((row) => this.presenter.present(row));
  }

  /** Another organiser's event, or one the caller may not see, is `404 not_found` (never 403). */
  async get(principal: Principal, eventId: string): Promise<TaggedEvent> {
    const row = await this.events.findVisible(principal, eventId);
    if (row === null) throw DomainError.notFound('Event');
    return tagged(this.presenter.present(row));
  }

  /**
   * `POST /v1/events`: the creation runs once per `Idempotency-Key`; a retry
   * with the same key replays the stored status, headers and body.
   */
  async createOnce(
    auth: AuthContext,
    body: unknown,
    rawKey: string | undefined,
    request: RequestContext,
  ): Promise<IdempotentOutcome> {
    const key = IdempotencyService.validKey(rawKey);
    return this.idempotency.execute({ organizerId: auth.principal.id, key, requestBody: body, request }, async (tx) => {
      const { event, etag } = await this.create(auth, body, tx);
      return { status: 201, headers: { etag, location: `/v1/events/${event.id}` }, body: event };
    });
  }

  private async create(auth: AuthContext, body: unknown, tx: Transaction): Promise<TaggedEvent> {
    const patch = parseOrThrow(body, 'create');
    const entity = this.newEntity(auth.principal.id);
    await this.applyPatch(entity, patch, tx);
    return tagged(this.presenter.present(await this.events.insert(entity, tx)));
  }

  /**
   * PATCH /v1/events/{id}. The row is locked before the `If-Match` check, so
   * the check and the write are one step: of two PATCHes holding the same
   * ETag, the second sees the first's result and gets 412.
   */
  async update(auth: AuthContext, eventId: string, body: unknown, ifMatch: string | undefined): Promise<TaggedEvent> {
    return this.unitOfWork.run(async (tx) => {
      const locked = await this.events.lockForWrite(eventId, tx, auth.principal.id);
      // Ownership first: no rule about the body may tell a stranger that the id exists.
      if (locked === null) throw DomainError.notFound('Event');
      const entity = locked.record;
      // No body gives no fields: a PATCH without one is told no writable fields were given, as for `{}`.
      const patch = parseOrThrow(body === undefined ? {} : body, 'update');
      if (!hasWritableFields(patch)) {
        throw DomainError.invalidArgument('The body has no writable fields; no writable fields were given.');
      }
      if (ifMatch !== undefined && !ifMatchMatches(ifMatch, tagged(this.presenter.present(locked.view)).etag)) {
        throw new DomainError(
          ErrorCode.PreconditionFailed,
          'If-Match does not match the current ETag; nothing was written.',
        );
      }
      this.assertVisibilityMove(entity.visibility ?? 'draft', patch.visibility);
      await this.applyPatch(entity, patch, tx);
      // A public event's startTime is what venues and listings show: it may not become a placeholder.
      if (entity.visibility === 'public' && !isPublishable(entity.planning)) {
        throw DomainError.invalidArgument(
          'A public event keeps planning.date.mode fixed: its startTime is shown as its date, never a placeholder.',
        );
      }
      entity.updatedAt = this.nextUpdatedAt(entity.updatedAt);
      return tagged(this.presenter.present(await this.events.save(entity, tx)));
    });
  }

  /** Whether the organiser owns the event (Orders: an organiser owns an order through its event). */
  async isOwnedBy(eventId: string, organizerId: string): Promise<boolean> {
    return (await this.events.findOwner(eventId))?.organizerId === organizerId;
  }

  /**
   * The event's owner, with the event row share-locked until `tx` ends, so an
   * owner change or a delete waits for the caller's commit (an order created
   * against the event then follows it). Null when the event does not exist.
   */
  async lockOwner(eventId: string, tx: Transaction): Promise<{ organizerId: string | null } | null> {
    return this.events.lockOwner(eventId, tx);
  }

  /** Internal fixtures: any visibility, a null or placeholder organiser, startTime optional. */
  async createInternal(organizerId: string | null, body: unknown, traceId: string): Promise<InternalEventResponse> {
    const patch = parseOrThrow(body, 'internal');
    return this.unitOfWork.run(async (tx) => {
      if (organizerId !== null) {
        if (!(await this.organisers.exists(organizerId, tx))) {
          throw DomainError.invalidArgument('organizerId does not name an existing organiser.');
        }
      }
      const entity = this.newEntity(organizerId);
      await this.applyPatch(entity, patch, tx);
      // Created public counts as becoming public for the first time.
      const publishedNow = entity.visibility === 'public';
      if (publishedNow) {
        if (!isPublishable(entity.planning)) throw this.unpublishable();
        entity.firstPublishedAt = entity.createdAt;
      }
      const written = await this.events.insert(entity, tx);
      if (publishedNow) await this.announcePublication(written, entity.locationId, entity.createdAt, tx, traceId);
      return { ...this.presenter.present(written), organizerId: written.organizerId };
    });
  }

  /**
   * Makes an event public. `event.published` is emitted only by the
   * conditional update that first sets `first_published_at` (the row is
   * locked, so two concurrent publishes emit once); publishing again emits nothing.
   */
  async publish(eventId: string, traceId: string): Promise<EventResponseDto> {
    return this.unitOfWork.run(async (tx) => {
      const { record, view } = await this.lockedById(eventId, tx);
      if (!isPublishable(record.planning)) throw this.unpublishable();
      const updatedAt = this.nextUpdatedAt(record.updatedAt);
      const published = await this.events.publish(eventId, updatedAt, tx);
      if (published === null) return this.presenter.present(view);
      if (published.firstPublication)
        await this.announcePublication(published, published.locationId, updatedAt, tx, traceId);
      return this.presenter.present(published);
    });
  }

  /** A write the public API does not expose: only `updatedAt` moves. */
  async touch(eventId: string): Promise<EventResponseDto> {
    return this.unitOfWork.run(async (tx) => {
      const { record } = await this.lockedById(eventId, tx);
      return this.presenter.present(await this.events.touch(eventId, this.nextUpdatedAt(record.updatedAt), tx));
    });
  }

  async delete(eventId: string): Promise<{ id: string; deleted: true }> {
    const deleted = await this.unitOfWork.run((tx) => this.events.delete(eventId, tx));
    if (!deleted) throw DomainError.notFound('Event');
    return { id: eventId, deleted: true };
  }

  /** `event.published`, carrying its webhooks' data from the statement that published the event. */
  private async announcePublication(
    published: WrittenEvent,
    locationId: string | null,
    publishedAt: Date,
    tx: Transaction,
    traceId: string,
  ): Promise<void> {
    const venueId = locationId === null ? null : await this.venues.venueOfLocation(locationId, tx);
    await this.bus.publish(
      new EventPublishedDomainEvent(
        published.id,
        published.organizerId,
        venueId === null ? [] : [venueId],
        this.presenter.publishedData(published),
        publishedAt,
        traceId,
      ),
      tx,
    );
  }

  private unpublishable(): DomainError {
    return DomainError.conflict('The event cannot be published while planning.date.mode is not fixed.');
  }

  private async lockedById(eventId: string, tx: Transaction): Promise<LockedEvent> {
    const locked = await this.events.lockForWrite(eventId, tx);
    if (locked === null) throw DomainError.notFound('Event');
    return locked;
  }

  /**
   * Visibility through the API: an unlisted event never returns to draft,
   * and a public or cancelled one is not moved by the API at all (those
   * transitions belong to the dashboard). Both refusals are `403 forbidden`.
   */
  private assertVisibilityMove(current: Visibility, requested: Visibility | undefined): void {
    if (requested === undefined || requested === current) return;
    if (current === 'unlisted' && requested === 'draft') {
      throw new DomainError(ErrorCode.Forbidden, 'An unlisted event cannot return to draft.');
    }
    if (current === 'public' || current === 'cancelled') {
      throw new DomainError(
        ErrorCode.Forbidden,
        `The visibility of a ${current} event cannot be changed through the API.`,
      );
    }
  }

  private newEntity(organizerId: string | null): EventEntity {
    const entity = new EventEntity();
    const now = new Date();
    Object.assign(entity, {
      id: newResourceId('evt'),
      organizerId,
      visibility: null,
      title: null,
      description: null,
      startTime: null,
      endTime: null,
      dateOnly: false,
      locationId: null,
      additionalLocationIds: [],
      planning: null,
      onlineMeeting: null,
      hideLocation: false,
      hideRelatedEvents: false,
      createdAt: now,
      updatedAt: now,
      firstPublishedAt: null,
      venueId: null,
      refundOffer: null,
    });
    return entity;
  }

  /**
   * A date-only event's instants: noon in `timeZone` on each one's calendar
   * day. A time the patch gives names its day (a date alone as written, an
   * instant by where it falls in `timeZone`). A stored time of an event that
   * was date-only already is noon on its day at the location it had: at the
   * same location it stays as stored (even when that location has been
   * deleted since and its zone is unknown); after a move its day is read in
   * the old location's zone, so the event keeps its day. A noon outside the
   * instants kept is refused, naming its field: stored, it would leave the
   * contract's range, and the list's cursor would refuse it as a position.
   */
  private async placeDateOnlyInstants(
    before: { locationId: string | null; dateOnly: boolean },
    entity: EventEntity,
    patch: EventPatch,
    timeZone: string,
    tx: Transaction,
  ): Promise<void> {
    const restored = before.dateOnly
      ? { startTime: patch.startTime === undefined, endTime: patch.endTime === undefined }
      : { startTime: false, endTime: false };
    const moved = before.locationId !== entity.locationId;
    let oldZone: string | null = null;
    if (moved && (restored.startTime || restored.endTime)) {
      oldZone =
        before.locationId === null
          ? 'UTC'
          : ((await this.venues.liveLocation(before.locationId, tx))?.timeZone ?? null);
      // The previous location's zone stored invalid: its calendar day cannot be read, so the instant stays as given.
      if (oldZone !== null && !isValidTimeZone(oldZone)) oldZone = null;
    }
    const place = (field: 'startTime' | 'endTime', value: Date | null, fromStore: boolean): Date | null => {
      if (value === null || (fromStore && !moved)) return value;
      try {
        return noonInTimeZone(fromStore && oldZone !== null ? calendarDayIn(value, oldZone) : value, timeZone);
      } catch (error) {
        if (!(error instanceof NoonOutOfRange)) throw error;
        throw DomainError.invalidArgument(
          `${field} is on ${error.day}, and a date-only event is kept at noon in its location's time zone: noon on that day in ${error.timeZone} is ${error.noon.toISOString()}, outside the instants kept (${new Date(EARLIEST_INSTANT_MS).toISOString()} to ${new Date(LATEST_INSTANT_MS).toISOString()}).`,
        );
      }
    };
    entity.startTime = place('startTime', entity.startTime, restored.startTime);
    entity.endTime = place('endTime', entity.endTime, restored.endTime);
  }

  /** Merges a validated patch into the stored event, applying the rules that need stored state. */
  private async applyPatch(entity: EventEntity, patch: EventPatch, tx: Transaction): Promise<void> {
    const before = { startTime: entity.startTime, locationId: entity.locationId, dateOnly: entity.dateOnly };
    // The entity names its columns after the EventPatch fields (the round-trip spec holds it to that).
    const stored = entity as unknown as Record<string, unknown>;
    for (const field of DIRECTLY_STORED_FIELDS) {
      if (patch[field] !== undefined) stored[field] = patch[field];
    }
    if (patch.startTime !== undefined) entity.startTime = patch.startTime;
    if (patch.endTime !== undefined) entity.endTime = patch.endTime;

    let timeZone = 'UTC';
    if (entity.locationId !== null) {
      const location = await this.venues.liveLocation(entity.locationId, tx);
      if (location === null) {
        if (patch.locationId !== undefined)
          throw DomainError.invalidArgument('locationId does not name a known location.');
      } else {
        timeZone = location.timeZone;
        entity.venueId = location.venueId;
      }
    } else {
      entity.venueId = null;
    }
    if (patch.additionalLocationIds !== undefined || patch.locationId !== undefined) {
      entity.additionalLocationIds = normaliseAdditionalLocationIds(
        patch.additionalLocationIds ?? entity.additionalLocationIds,
        entity.locationId,
      );
    }
    // dateOnly: no time of day; the stored instant is noon in the venue's time zone. Every way to make a
    // location checks its zone; one stored before they all did is refused here, never a 500.
    if (entity.dateOnly && !isValidTimeZone(timeZone)) {
      throw DomainError.invalidArgument(
        `The location ${entity.locationId} has the time zone "${timeZone}", which is no IANA zone, so its noon is unknown; an operator must correct the location.`,
      );
    }
    if (entity.dateOnly) await this.placeDateOnlyInstants(before, entity, patch, timeZone, tx);
    if (entity.startTime !== null && entity.endTime !== null && entity.endTime < entity.startTime) {
      throw DomainError.invalidArgument('endTime must not be before startTime.');
    }
    // refundOfferOnChange is consumed here and never stored.
    if (
      shouldCreateRefundOffer(
        before,
        { startTime: entity.startTime, locationId: entity.locationId },
        patch.refundOfferOnChange,
      )
    ) {
      entity.refundOffer = {
        createdAt: new Date().toISOString(),
        previousStartTime: before.startTime?.toISOString() ?? null,
        previousLocationId: before.locationId,
      };
    }
  }

  /** `updatedAt` always moves forward, even when two writes land within one millisecond. */
  private nextUpdatedAt(previous: Date): Date {
    return new Date(Math.max(Date.now(), previous.getTime() + 1));
  }
}
