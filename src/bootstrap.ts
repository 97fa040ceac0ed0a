import { DiscoveryService, NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LogController } from 'fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import { ApiKeysService } from './identity/api-keys.service';
import { listensOnEveryAddress, type AppConfig } from './config/app-config';
import { roleDuties } from './config/service-role';
import { frameworkErrorAnswer, type FrameworkAnswers } from './common/errors/framework-errors';
import { HtmlSections } from './common/html/html-sections';
import { EnvelopingFastifyAdapter } from './common/envelope/enveloping-fastify-adapter';
import { adminTokenMatcher } from './common/auth-context/admin-token';
import { installRequestAuthentication } from './common/auth-context/request-authentication';
import { AccountRateLimitGuard, installAccountBudgetBeforeBody } from './common/rate-limit/account-rate-limit.guard';
import { installHttpConventions } from './common/http/http-conventions';
import { requestLoggerFactory } from './common/logging/request-logger';
import { ID_LESS_DELETE_PATHS, routeIdLessDelete } from './common/http/id-less-delete';
import { RouteCatalogue } from './common/http/route-catalogue';
import { ClientFailureBudget } from './common/rate-limit/client-failure-budget';
import { EmptyBodyRoutes, installJsonBodyParser } from './common/http/json-body';
import { listenerOf, markAdminRequest, pathOf, requestIsUnder, stripPrefixBeforeVersion } from './common/http/listener';
import { DomainError } from './common/errors/domain-error';
import { ErrorCode } from './common/errors/error-code';
import {
  askForBodiesOnceAccepted,
  clientErrorsAnsweredByListener,
  listenerServer,
} from './common/http/listener-server';
import { RouteTable } from './common/http/route-table';
import { serveOpenApiDefinitions } from './common/openapi/openapi-definitions';
import { OpenApiDocumentStore } from './common/openapi/openapi-document.store';
import { buildOpenApiDocuments } from './common/openapi/openapi-documents';
import { openApiFragments } from './openapi-fragments';
import { PinoNestLogger } from './common/logging/logger';
import { requestIdFor } from './common/request-id/request-id';
import { unvalidatedInputsOf } from './common/validation/validated-body';
import { registerDashboardPlugins } from './dashboard/dashboard-plugins';
import { installPortalHeaders } from './portal/portal-headers';
import { drainAndClose } from './health/graceful-shutdown';
import { installHealthRoutes } from './health/health-routes';

export interface RunningService {
  app: NestFastifyApplication;
  /** Null on a worker (SERVICE_ROLE=worker), which serves only the admin listener. */
  publicUrl: string | null;
  /** Null when the internal listener is off (no ADMIN_TOKEN outside the embedded default). */
  adminUrl: string | null;
  /** Graceful: readiness 503, listeners stop, requests in flight finish (SHUTDOWN_TIMEOUT_MS), then Nest closes. */
  close(): Promise<void>;
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** The listener whose `listen` threw each error: its code (EADDRINUSE, ENOTFOUND) names an address, not a setting. */
const listenFailures = new WeakMap<object, 'public' | 'admin'>();

/** Which listener could not listen, when `error` is such a failure: the start names its settings. */
export function listenerThatFailed(error: unknown): 'public' | 'admin' | null {
  if (typeof error !== 'object' || error === null) return null;
  return listenFailures.get(error) ?? null;
}

async function listening(listener: 'public' | 'admin', listen: () => Promise<unknown>): Promise<void> {
  try {
    await listen();
  } catch (error) {
    if (typeof error === 'object' && error !== null) listenFailures.set(error, listener);
    throw error;
  }
}

function urlOf(server: Server, host: string): string {
  const address = server.address() as AddressInfo;
  const shownHost = listensOnEveryAddress(host) ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shownHost}:${address.port}`;
}

/** Fail closed at start: a public route that forgot `@RequireAccess` stops the service instead of serving anyone. */
function refuseRoutesWithoutAccessRule(catalogue: RouteCatalogue): void {
  const open = catalogue.routesWithoutAccess();
  if (open.length > 0) {
    const names = open.map((route) => `${route.method} ${route.path}`).join(', ');
    throw new Error(`public routes without @RequireAccess: ${names}`);
  }
}

/** Fail closed at start: a body that forgot its pipe (a bare `@Body()`) stops the service instead of arriving unchecked. */
function refuseUnvalidatedInputs(app: NestFastifyApplication): void {
  const controllers = app
    .get(DiscoveryService)
    .getControllers()
    .flatMap((wrapper) => (wrapper.metatype === null || wrapper.metatype === undefined ? [] : [wrapper.metatype]));
  const unvalidated = unvalidatedInputsOf(controllers as Array<abstract new (...args: never[]) => unknown>);
  if (unvalidated.length > 0) throw new Error(`handler inputs no pipe validates: ${unvalidated.join('; ')}`);
}

/**
 * Builds both OpenAPI documents from the controllers' decorators once, and
 * serves the public one (`/openapi.json`, `/openapi.yaml`) with its
 * reference page (Swagger UI, whose assets @nestjs/swagger serves itself: no
 * CDN) on the public listener.
 */
function serveOpenApi(app: NestFastifyApplication, config: AppConfig): void {
  const documents = buildOpenApiDocuments(app, config, openApiFragments());
  app.get(OpenApiDocumentStore).set(documents);
  serveOpenApiDefinitions(app.getHttpAdapter(), documents.public, { json: '/openapi.json', yaml: '/openapi.yaml' });
  serveOnlyTheReferencePageAssets(app, '/docs/');
  refuseFramingOfTheReferencePage(app, '/docs');
  SwaggerModule.setup('docs', app, documents.public, {
    // The document's own routes are served above, each serialised once.
    raw: false,
    customSiteTitle: 'Events, Orders and Webhooks API reference',
    swaggerOptions: {
      deepLinking: true,
      displayOperationId: false,
      displayRequestDuration: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 1,
      defaultModelExpandDepth: 3,
      filter: true,
      // A key pasted into "Authorize" is not kept in localStorage, which this origin shares with the portal.
      persistAuthorization: false,
      showExtensions: false,
      tryItOutEnabled: false,
    },
  });
}

/**
 * The files of swagger-ui-dist the reference page loads (@nestjs/swagger's
 * page template); `swagger-ui-init.js` is the service's own route.
 */
const REFERENCE_PAGE_ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-16x16.png',
  'favicon-32x32.png',
]);

/**
 * The reference page has an "Authorize" dialog a reader may paste a key
 * into: no other site may frame it (and overlay it, to have the key typed
 * into a page it cannot see).
 */
function refuseFramingOfTheReferencePage(app: NestFastifyApplication, page: string): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (request, reply, payload, done) => {
      if (requestIsUnder(request, page)) {
        void reply.headers({ 'content-security-policy': "frame-ancestors 'none'", 'x-frame-options': 'DENY' });
      }
      done(null, payload);
    });
}

/**
 * @nestjs/swagger serves the whole swagger-ui-dist folder under `/docs/`:
 * with the assets, the stock `index.html` (a page that loads the Petstore
 * document from another host, also at `/docs/`), source maps, licences and
 * package.json. Of its routes there, only the assets the reference page loads
 * and the service's own `swagger-ui-init.js` answer; any other name is
 * answered as a route that does not exist.
 */
function serveOnlyTheReferencePageAssets(app: NestFastifyApplication, folder: string): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (!route.url.startsWith(folder) || route.url.endsWith('/swagger-ui-init.js')) return;
      const wildcard = route.url === `${folder}*`;
      if (!wildcard && REFERENCE_PAGE_ASSETS.has(route.url.slice(folder.length))) return;
      const own = route.preHandler === undefined ? [] : [route.preHandler].flat();
      route.preHandler = [
        (request, _reply, done) => {
          const name = wildcard ? (request.params as Record<string, string | undefined>)['*'] : undefined;
          // Said as a route miss is (and the same for GET and HEAD), not the framework's "Cannot GET …"; no 405,
          // though the wildcard route takes GET.
          if (name !== undefined && REFERENCE_PAGE_ASSETS.has(name)) done();
          else done(new DomainError(ErrorCode.NotFound, `No resource at ${pathOf(request.url)}.`));
        },
        ...own,
      ];
    });
}

/**
 * Builds the Nest application on Fastify and serves it on two listeners: the
 * public API on HOST:PORT and the internal API on ADMIN_HOST:ADMIN_PORT. One
 * Fastify instance handles both sockets; the admin server marks the requests
 * it accepts and the conventions hook keeps each listener to its own paths.
 */
export async function startService(config: AppConfig, logger: Logger): Promise<RunningService> {
  const { servesApi } = roleDuties(config);
  // Fail closed: a worker's probes and metrics are on the admin listener, its only one.
  if (!servesApi && config.adminToken === null) {
    throw new Error('SERVICE_ROLE=worker needs the admin listener (ADMIN_TOKEN) for its probes and metrics');
  }
  const routes = new RouteTable();
  // The dashboard and the portal add themselves once built; the router's errors (below) are answered before that.
  const sections = new HtmlSections();
  const failures = new ClientFailureBudget(config.rateLimit.failuresPerClient, config.rateLimit.windowSeconds);
  // The router's own refusals (a malformed or overlong URL) are recorded as every answer is, once that is installed.
  const frameworkAnswers: FrameworkAnswers = { record: null };
  let handler: RequestHandler | undefined;
  const adapter = new EnvelopingFastifyAdapter({
    serverFactory: (fastifyHandler: RequestHandler) => {
      handler = fastifyHandler;
      return listenerServer(fastifyHandler, config.keepAliveTimeoutMs);
    },
    loggerInstance: logger,
    // One line per request is written by the conventions hook; Fastify's own pair is off.
    logController: new LogController({ requestIdLogLabel: 'reqId', disableRequestLogging: true }),
    childLoggerFactory: requestLoggerFactory,
    genReqId: requestIdFor,
    frameworkErrors: frameworkErrorAnswer(sections, frameworkAnswers),
    clientErrorHandler: clientErrorsAnsweredByListener,
    bodyLimit: config.bodyLimitBytes,
    rewriteUrl: (request: IncomingMessage) => {
      const url = request.url ?? '/';
      return listenerOf(request) === 'admin' ? url : routeIdLessDelete(request.method, stripPrefixBeforeVersion(url));
    },
    exposeHeadRoutes: true,
    // request.ip: the socket's peer unless that peer is a trusted proxy (then X-Forwarded-For, proxy-addr's rules).
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    return503OnClosing: true,
  });
  frameworkAnswers.record = installHttpConventions(
    adapter.getInstance(),
    routes,
    failures,
    adminTokenMatcher(config.adminToken),
  );
  for (const path of ID_LESS_DELETE_PATHS) routes.record('DELETE', path);
  const emptyBodies = new EmptyBodyRoutes();
  installJsonBodyParser(adapter.getInstance(), config, emptyBodies);
  installPortalHeaders(adapter.getInstance(), config);

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, routes, sections), adapter, {
    logger: new PinoNestLogger(logger),
    abortOnError: false,
    // installJsonBodyParser owns body parsing.
    bodyParser: false,
  });
  try {
    return await serve(app, adapter, config, handler, emptyBodies);
  } catch (error) {
    // A start refused after the pool opened (a start-up check, a busy port) must not leave it open.
    await app.close().catch(() => undefined);
    throw error;
  }
}

async function serve(
  app: NestFastifyApplication,
  adapter: EnvelopingFastifyAdapter,
  config: AppConfig,
  handler: RequestHandler | undefined,
  emptyBodies: EmptyBodyRoutes,
): Promise<RunningService> {
  const { servesApi } = roleDuties(config);
  // Added after the conventions' hooks (so after the route decision) and before any route is registered.
  installRequestAuthentication(adapter.getInstance(), app.get(ApiKeysService), adminTokenMatcher(config.adminToken));
  installAccountBudgetBeforeBody(adapter.getInstance(), app.get(AccountRateLimitGuard));
  askForBodiesOnceAccepted(adapter.getInstance());
  refuseRoutesWithoutAccessRule(app.get(RouteCatalogue));
  emptyBodies.accept(app.get(RouteCatalogue).routesWithoutRequiredBody());
  refuseUnvalidatedInputs(app);
  // Plugins first: awaiting a registration loads every plugin registered so far, and the reference
  // routes must load later, once Nest's error handler is in place (else their errors skip the filter).
  await registerDashboardPlugins(app);
  serveOpenApi(app, config);
  installHealthRoutes(app);
  // The start-up hooks (the connection budget, the sealing key's check) run here, before any listener:
  // their refusals are the start's own, never taken for a listener's failure to listen.
  await app.init();
  let publicUrl: string | null = null;
  if (servesApi) {
    await listening('public', () => app.listen(config.port, config.host));
    publicUrl = urlOf(app.getHttpServer(), config.host);
  } else {
    // The admin server below hands its requests to Fastify: it must be ready without listening itself.
    await adapter.getInstance().ready();
  }

  let adminServer: Server | null = null;
  if (config.adminToken !== null && handler !== undefined) {
    const fastifyHandler = handler;
    const server = listenerServer((request, response) => {
      markAdminRequest(request);
      fastifyHandler(request, response);
    }, config.keepAliveTimeoutMs);
    await listening(
      'admin',
      () =>
        new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(config.adminPort, config.adminHost, () => resolve());
        }),
    );
    adminServer = server;
  }
  const adminUrl = adminServer === null ? null : urlOf(adminServer, config.adminHost);
  // Fastify logs the public listener's address as it listens; the admin listener is a server of its own.
  if (adminUrl !== null) adapter.getInstance().log.info(`Admin listener listening at ${adminUrl}`);

  const servers = [...(servesApi ? [app.getHttpServer()] : []), ...(adminServer === null ? [] : [adminServer])];
  return {
    app,
    publicUrl,
    adminUrl,
    close: () => drainAndClose({ app, servers, timeoutMs: config.shutdownTimeoutMs }),
  };
}
