import type { INestApplicationContext } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error';
import { EventsService } from '../events/events.service';
import { ApiKeysService } from '../identity/api-keys.service';
import { OrdersService } from '../orders/orders.service';
import { MAX_LINK_TTL_SECONDS, MIN_LINK_TTL_SECONDS, PortalLinksService } from '../portal/portal-links.service';
import { OrganisersService } from '../identity/organisers.service';
import { CreateOrganiserDto } from '../identity/dto/identity.dto';
import { CreateLocationDto, CreateVenueDto } from '../venues/dto/venue.dto';
import { VenuesService } from '../venues/venues.service';
import { validatedInternalBody } from '../common/validation/validation.pipe';
import { WebhookDeliveryWorker } from '../webhooks/delivery/webhook-delivery.worker';
import { readRecoverWindow } from '../webhooks/webhook-operation-inputs';
import { MAX_GRACE_SECONDS, WebhookOperationsService } from '../webhooks/webhook-operations.service';
import { optionalFlag, OpsUsageError, requiredFlag, switchFlag, type OpsArguments } from './ops-arguments';
import { newTraceId } from '../../libs/trace/trace-context';
import { InstanceRegistry } from '../database/instances/instance-registry';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { sealingKeyId } from '../../libs/webhooks/sealing-key-id';

export type OpsCommand = (app: INestApplicationContext, args: OpsArguments) => Promise<unknown>;
/**
 * Why the command must not run, found before it does: a usage-like refusal
 * (exit 2, on stderr), for what the command would break that no domain rule
 * of the service covers. Null: go ahead.
 */
export type OpsRefusal = (app: INestApplicationContext) => Promise<string | null>;

/**
 * Re-sealing under the new key breaks every running instance that cannot open
 * it (GET /v1/webhooks answers 500, deliveries go unsigned) until it restarts
 * with that key. Each instance records the ids of the keys it can open; one
 * that cannot open the new key, or whose build records none, stops the
 * command, named, so the runbook's order (restart every instance first) is
 * kept by the tool and not by memory alone.
 */
async function resealRefusal(app: INestApplicationContext): Promise<string | null> {
  const secretKey = app.get<AppConfig>(APP_CONFIG).webhooks.secretKey;
  // The service's own refusal says there is no key to seal under.
  if (secretKey === null) return null;
  const current = sealingKeyId(secretKey);
  const unable = (await app.get(InstanceRegistry).liveSealingKeys()).filter(
    ({ sealingKeyIds }) => sealingKeyIds === null || !sealingKeyIds.includes(current),
  );
  if (unable.length === 0) return null;
  const named = unable
    .map(
      ({ id, host, sealingKeyIds }) =>
        `${id} on ${host}${sealingKeyIds === null ? ' (a build that records no keys)' : ''}`,
    )
    .join(', ');
  return `webhooks:reseal-secrets refused: ${unable.length} live instance(s) cannot open secrets sealed under this WEBHOOK_SECRET_KEY (key ${current}): ${named}. Restart each with it as WEBHOOK_SECRET_KEY and the old key in WEBHOOK_SECRET_KEY_PREVIOUS first, then run this again.`;
}

function principalFrom(args: OpsArguments): { type: 'organiser' | 'venue'; id: string } | undefined {
  const organiser = optionalFlag(args, 'organiser');
  const venue = optionalFlag(args, 'venue');
  if (organiser !== undefined && venue !== undefined) throw new OpsUsageError('give --organiser or --venue, not both');
  if (organiser !== undefined) return { type: 'organiser', id: organiser };
  if (venue !== undefined) return { type: 'venue', id: venue };
  return undefined;
}

/**
 * A flag's whole number, within the bounds the service itself enforces,
 * refused in the service's words under the flag's name: the service's own
 * message names the field of the HTTP body (`graceSeconds`), which the
 * person at the command line never typed. A value that is no number at all
 * is a usage error; one out of bounds is the rule's refusal, as over HTTP.
 */
function wholeNumberFlag(args: OpsArguments, name: string, min: number, max: number): number | undefined {
  const value = optionalFlag(args, name);
  if (value === undefined) return undefined;
  const rule = `--${name} must be a whole number from ${min} to ${max}.`;
  if (!/^\d+$/.test(value)) throw new OpsUsageError(rule);
  const number = Number(value);
  if (number < min || number > max) throw DomainError.invalidArgument(rule);
  return number;
}

/** A flag's JSON; text that is not JSON is a usage error naming the flag, not only the parser's position. */
function parsedJson(name: string, value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    throw new OpsUsageError(`--${name} must be valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** `--json`'s object, the body of the internal API's `route`; absent, an empty body. */
function jsonBodyFlag(args: OpsArguments, route: string): object {
  const json = optionalFlag(args, 'json');
  const body = json === undefined ? {} : parsedJson('json', json);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OpsUsageError(`--json must be a JSON object, the body of ${route}`);
  }
  return body;
}

/**
 * The dashboard operations on the command line. Each calls the same domain
 * service as the internal HTTP API, so the same rules apply and the same
 * domain events are emitted. Output is JSON; secrets other than a newly
 * minted key are never printed.
 */
/** A line for stderr about what the command did, beside its JSON (which stays the command's only stdout); null: none. */
export type OpsNote = (result: unknown) => string | null;

/**
 * A resend runs its attempt in the CLI's process, under the CLI's own address
 * rules and trust store: without the service's WEBHOOK_ALLOW_PRIVATE_CIDRS (or
 * WEBHOOK_ALLOWED_PORTS) a receiver the service reaches is refused, and the
 * refusal ends the delivery as `dropped`; without its NODE_EXTRA_CA_CERTS a
 * receiver with a private CA's certificate fails as a `network_error`. That
 * is said, not left to be read from the JSON of an exit code 0.
 */
function resendNote(delivery: unknown): string | null {
  const outcome = (delivery as { lastStatus?: unknown } | null)?.lastStatus;
  if (outcome === 'blocked_host') {
    return (
      "webhooks:resend: the attempt was refused by this command's own address rules (blocked_host), which ends the " +
      'delivery as dropped; if the service reaches this receiver, run the command with its WEBHOOK_ALLOW_PRIVATE_CIDRS ' +
      'and WEBHOOK_ALLOWED_PORTS, and resend again'
    );
  }
  if (outcome === 'network_error') {
    return (
      'webhooks:resend: the attempt reached no answer (network_error: the connection or its TLS failed), from this ' +
      "command's own process; if the service reaches this receiver, run the command with the service's " +
      'NODE_EXTRA_CA_CERTS (a receiver certificate signed by a private CA), WEBHOOK_ALLOW_PRIVATE_CIDRS and ' +
      'WEBHOOK_ALLOWED_PORTS, and resend again'
    );
  }
  return null;
}

export const OPS_COMMANDS: Record<string, { usage: string; run: OpsCommand; refusal?: OpsRefusal; note?: OpsNote }> = {
  'organisers:create': {
    usage: '--name <name> [--placeholder]',
    run: async (app, args) => {
      // The internal API's own rules for that body (a name of at most 500 characters).
      const organiser = await validatedInternalBody(
        { name: requiredFlag(args, 'name'), placeholder: switchFlag(args, 'placeholder') },
        CreateOrganiserDto,
      );
      return app.get(OrganisersService).create(organiser);
    },
  },
  'organisers:list': {
    usage: '',
    run: (app) => app.get(OrganisersService).list(),
  },
  'keys:create': {
    usage: '(--organiser <id> | --venue <id>) --role <owner|org_manager> [--scopes a,b] [--name <name>]',
    run: (app, args) => {
      const principal = principalFrom(args);
      if (principal === undefined) throw new OpsUsageError('--organiser <id> or --venue <id> is required');
      const scopes = optionalFlag(args, 'scopes');
      return app.get(ApiKeysService).mint({
        principal,
        scopes: scopes?.split(',').map((scope) => scope.trim()),
        actorRole: requiredFlag(args, 'role'),
        name: optionalFlag(args, 'name'),
      });
    },
  },
  'keys:list': {
    usage: '[--organiser <id> | --venue <id>]',
    run: (app, args) => app.get(ApiKeysService).list(principalFrom(args)),
  },
  'keys:revoke': {
    usage: '--key <keyId> --role <owner|org_manager>',
    run: (app, args) => app.get(ApiKeysService).revoke(requiredFlag(args, 'key'), requiredFlag(args, 'role')),
  },
  'venues:create': {
    usage: "--name <name> [--slug <slug>] [--json '<full POST /internal/venues body>']",
    run: async (app, args) => {
      const body = jsonBodyFlag(args, 'POST /internal/venues');
      const name = optionalFlag(args, 'name');
      const slug = optionalFlag(args, 'slug');
      // The internal API's own validation of that body: the same rules, whichever way the venue is made.
      const venue = await validatedInternalBody(
        { ...body, ...(name === undefined ? {} : { name }), ...(slug === undefined ? {} : { slug }) },
        CreateVenueDto,
      );
      return app.get(VenuesService).create(venue);
    },
  },
  'venues:list': {
    usage: '',
    run: (app) => app.get(VenuesService).list(),
  },
  'locations:create': {
    usage: "--venue <venueId> [--json '<full POST /internal/venues/{venueId}/locations body>']",
    run: async (app, args) => {
      const venueId = requiredFlag(args, 'venue');
      // The internal API's own validation of that body (an IANA time zone, the fields' lengths).
      const location = await validatedInternalBody(
        jsonBodyFlag(args, 'POST /internal/venues/{venueId}/locations'),
        CreateLocationDto,
      );
      return app.get(VenuesService).addLocation(venueId, location);
    },
  },
  'locations:delete': {
    usage: '--venue <venueId> --location <locationId>',
    run: (app, args) =>
      app.get(VenuesService).deleteLocation(requiredFlag(args, 'venue'), requiredFlag(args, 'location')),
  },
  'events:publish': {
    usage: '--event <eventId>',
    run: (app, args) => app.get(EventsService).publish(requiredFlag(args, 'event'), newTraceId()),
  },
  'orders:confirm': {
    usage: '--order <orderId>',
    run: (app, args) => app.get(OrdersService).confirm(requiredFlag(args, 'order'), newTraceId()),
  },
  'webhooks:enable': {
    usage: '--webhook <webhookId> [--recover]',
    run: (app, args) =>
      app.get(WebhookOperationsService).enable(requiredFlag(args, 'webhook'), { recover: switchFlag(args, 'recover') }),
  },
  'webhooks:show': {
    usage: '--webhook <webhookId>',
    run: (app, args) => app.get(WebhookOperationsService).detail(requiredFlag(args, 'webhook')),
  },
  'webhooks:deliveries': {
    usage: '--webhook <webhookId>',
    run: (app, args) => app.get(WebhookOperationsService).deliveries(requiredFlag(args, 'webhook')),
  },
  'webhooks:resend': {
    usage: '--webhook <webhookId> --delivery <deliveryId> [--force]',
    run: async (app, args) => {
      const webhookId = requiredFlag(args, 'webhook');
      const deliveryId = requiredFlag(args, 'delivery');
      const operations = app.get(WebhookOperationsService);
      await operations.resend(webhookId, deliveryId, { force: switchFlag(args, 'force') });
      // The attempt runs in this process: wait for it, then show how it went.
      await app.get(WebhookDeliveryWorker).idle();
      return operations.delivery(webhookId, deliveryId);
    },
    note: resendNote,
  },
  'webhooks:recover': {
    usage: '--webhook <webhookId> --since <instant> [--until <instant>]',
    run: (app, args) =>
      app
        .get(WebhookOperationsService)
        .recover(
          requiredFlag(args, 'webhook'),
          readRecoverWindow({ since: requiredFlag(args, 'since'), until: optionalFlag(args, 'until') }),
        ),
  },
  'webhooks:rotate-secret': {
    usage: '--webhook <webhookId> [--grace-seconds <0..604800>]',
    run: (app, args) => {
      const graceSeconds = wholeNumberFlag(args, 'grace-seconds', 0, MAX_GRACE_SECONDS);
      return app.get(WebhookOperationsService).rotateSecret(requiredFlag(args, 'webhook'), { graceSeconds });
    },
  },
  'webhooks:reseal-secrets': {
    usage: '',
    run: (app) => app.get(WebhookOperationsService).resealSecrets(),
    refusal: resealRefusal,
  },
  'portal:link': {
    usage: '--account <organiserId|venueId> [--read-only] [--ttl <60..3600 seconds>]',
    run: (app, args) => {
      return app.get(PortalLinksService).mint({
        accountId: requiredFlag(args, 'account'),
        readOnly: switchFlag(args, 'read-only'),
        ttlSeconds: wholeNumberFlag(args, 'ttl', MIN_LINK_TTL_SECONDS, MAX_LINK_TTL_SECONDS),
      });
    },
  },
  'portal:revoke': {
    usage: '--account <organiserId|venueId>',
    run: (app, args) => app.get(PortalLinksService).revoke(requiredFlag(args, 'account')),
  },
};
