import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LogController } from 'fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import type { AppConfig } from './config/app-config';
import { answerFrameworkError } from './common/errors/framework-errors';
import { installHttpConventions } from './common/http/http-conventions';
import { listenerOf, markAdminRequest, stripPrefixBeforeVersion } from './common/http/listener';
import { RouteTable } from './common/http/route-table';
import { PinoNestLogger } from './common/logging/logger';
import { requestIdFor } from './common/request-id/request-id';
import { drainAndClose } from './health/graceful-shutdown';
import { installHealthRoutes } from './health/health-routes';

export interface RunningService {
  app: NestFastifyApplication;
  publicUrl: string;
  /** Null when the internal listener is off (no ADMIN_TOKEN outside the embedded default). */
  adminUrl: string | null;
  /** Graceful: readiness 503, listeners stop, requests in flight finish (SHUTDOWN_TIMEOUT_MS), then Nest closes. */
  close(): Promise<void>;
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

function urlOf(server: Server, host: string): string {
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shownHost}:${address.port}`;
}

function buildOpenApi(app: NestFastifyApplication, config: AppConfig): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setOpenAPIVersion('3.1.0')
      .setTitle('Events, Orders and Webhooks API')
      .setDescription('Public REST API v1 for event organisers and venues. See the README for conventions.')
      .setVersion('1.0.0')
      .addServer(config.publicWebUrl)
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'svc_live_ followed by 48 hex characters' })
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
}

/**
 * Builds the Nest application on Fastify and serves it on two listeners: the
 * public API on HOST:PORT and the internal API on ADMIN_HOST:ADMIN_PORT. One
 * Fastify instance handles both sockets; the admin server marks the requests
 * it accepts and the conventions hook keeps each listener to its own paths.
 */
export async function startService(config: AppConfig, logger: Logger): Promise<RunningService> {
  const routes = new RouteTable();
  let handler: RequestHandler | undefined;
  const adapter = new FastifyAdapter({
    serverFactory: (fastifyHandler: RequestHandler) => {
      handler = fastifyHandler;
      return createServer(fastifyHandler);
    },
    loggerInstance: logger,
    // One line per request is written by the conventions hook; Fastify's own pair is off.
    logController: new LogController({ requestIdLogLabel: 'reqId', disableRequestLogging: true }),
    genReqId: requestIdFor,
    frameworkErrors: answerFrameworkError,
    bodyLimit: config.bodyLimitBytes,
    rewriteUrl: (request: IncomingMessage) => {
      const url = request.url ?? '/';
      return listenerOf(request) === 'admin' ? url : stripPrefixBeforeVersion(url);
    },
    exposeHeadRoutes: true,
    return503OnClosing: true,
  });
  installHttpConventions(adapter.getInstance(), routes);

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, routes), adapter, {
    logger: new PinoNestLogger(logger),
    abortOnError: false,
  });
  buildOpenApi(app, config);
  installHealthRoutes(app);
  await app.listen(config.port, config.host);
  const publicUrl = urlOf(app.getHttpServer(), config.host);

  let adminServer: Server | null = null;
  if (config.adminToken !== null && handler !== undefined) {
    const fastifyHandler = handler;
    const server = createServer((request, response) => {
      markAdminRequest(request);
      fastifyHandler(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.adminPort, config.adminHost, () => resolve());
    });
    adminServer = server;
  }
  const adminUrl = adminServer === null ? null : urlOf(adminServer, config.adminHost);

  return {
    app,
    publicUrl,
    adminUrl,
    close: () =>
      drainAndClose({
        app,
        servers: adminServer === null ? [app.getHttpServer()] : [app.getHttpServer(), adminServer],
        timeoutMs: config.shutdownTimeoutMs,
      }),
  };
}
