export {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  WEBHOOK_SECRET_PREFIX,
  generateWebhookSecret,
  signPayload,
  verifySignature,
  type SignatureFailureReason,
  type SignatureVerification,
  type VerifySignatureOptions,
} from './webhook-signature';
export {
  DEFAULT_JITTER,
  DEFAULT_RETRY_SCHEDULE,
  describeSchedule,
  retryAfterDelayMs,
  retryDelayMs,
  type BackoffOptions,
  type RetryAfterBounds,
  type ScheduleOptions,
} from './retry-backoff';
export {
  checkWebhookUrl,
  cidrContains,
  isPublicAddress,
  parseCidr,
  parseCidrList,
  resolvePublicAddress,
  type AddressLookup,
  type ParsedCidr,
  type PublicAddressResolution,
  type ResolvedAddress,
  type WebhookUrlCheck,
} from './public-address';
