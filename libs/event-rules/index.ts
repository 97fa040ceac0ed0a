// The throwing `*Value` parsers and field checks stay internal: callers get result values, never exceptions.
export {
  API_WRITABLE_VISIBILITIES,
  DIRECTLY_STORED_FIELDS,
  EVENT_PATCH_FIELDS,
  MAX_ADDITIONAL_LOCATIONS,
  MAX_LOCALES,
  SERVER_OWNED_EVENT_FIELDS,
  SPECIALLY_STORED_FIELDS,
  VISIBILITIES,
  hasWritableFields,
  normaliseAdditionalLocationIds,
  parseEventPatch,
} from './event-patch';
export type {
  DirectlyStoredField,
  EventPatch,
  EventPatchErrorCode,
  EventPatchMode,
  EventPatchResult,
  Visibility,
} from './event-patch';
export { MAX_DATE_OPTIONS, PLANNING_DATE_MODES, PLANNING_PLACE_MODES, isPublishable, parsePlanning } from './planning';
export type {
  Planning,
  PlanningDate,
  PlanningDateMode,
  PlanningDateOption,
  PlanningPlace,
  PlanningPlaceMode,
  StoredPlanning,
} from './planning';
export { MEETING_PROVIDERS, MEETING_PROVIDER_CODES, isProviderHost, parseOnlineMeeting } from './online-meeting';
export type { MeetingHostRule, MeetingProvider, OnlineMeeting } from './online-meeting';
export { CalendarDay, calendarDayIn, isValidTimeZone, noonInTimeZone, NoonOutOfRange } from './date-only';
export { shouldCreateRefundOffer } from './refund-offer';
export type { EventWhenAndWhere } from './refund-offer';
export type { CheckResult } from './field-checks';
