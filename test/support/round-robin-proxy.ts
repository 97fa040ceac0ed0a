import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The backends it may send to (base URLs); it sends only to those whose `/readyz` answered 200 last. */
  backends: string[];
  /** Requests the proxy forwarded, by backend. */
  readonly forwarded: Map<string, number>;
  close(): Promise<void>;
}

const HEALTH_EVERY_MS = 50;

/**
 * A load balancer in a few lines, as a deployment would put in front of
 * several instances: round robin over the backends whose `/readyz` answers
 * 200 (checked every 50 ms), and a request whose connection was refused
 * (nothing was sent, so nothing was accepted) tried on the next backend.
 */
export async function startRoundRobinProxy(
  backends: string[],
  options: { port?: number } = {},
): Promise<RoundRobinProxy> {
  const ready = new Set<string>();
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const forwarded = new Map<string, number>();
  let next = 0;
  let closed = false;
  const proxy = { url: '', backends: [...backends], forwarded, close: async (): Promise<void> => undefined };

  const probe = async (): Promise<void> => {
    await Promise.all(
      proxy.backends.map(async (backend) => {
        const ok = await fetch(`${backend}/readyz`, { signal: AbortSignal.timeout(500) })
          .then((response) => response.status === 200)
          .catch(() => false);
        if (ok) ready.add(backend);
        else ready.delete(backend);
      }),
    );
  };
  const healthLoop = (async () => {
    await Promise.resolve();
    while (!closed) {
      await probe();
      await new Promise((resolve) => setTimeout(resolve, HEALTH_EVERY_MS));
    }
  })();

  const forward = (incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse, triesLeft: number): void => {
    const candidates = proxy.backends.filter((backend) => ready.has(backend));
    const backend = candidates[next++ % Math.max(1, candidates.length)];
    if (triesLeft === 0) {
      outgoing.writeHead(502).end();
      return;
    }
    if (backend === undefined) {
      // Nobody ready this instant (one instance restarting, the other's probe in flight): wait for the next probe.
      setTimeout(() => forward(incoming, body, outgoing, triesLeft - 1), HEALTH_EVERY_MS);
      return;
    }
    const upstream = httpRequest(
      `${backend}${incoming.url ?? '/'}`,
      { method: incoming.method, headers: incoming.headers, agent },
      (response) => {
        forwarded.set(backend, (forwarded.get(backend) ?? 0) + 1);
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      // Refused: the backend stopped listening before this proxy noticed; nothing reached it. Reset before any
      // answer, on a read: a draining backend closed the idle keep-alive connection this request was written
      // on, before reading it (requests it had begun are answered). Both go to the next backend, as load
      // balancers do for requests that are safe to send again.
      const notAccepted =
        error.code === 'ECONNREFUSED' ||
        (error.code === 'ECONNRESET' && ['GET', 'HEAD'].includes(incoming.method ?? ''));
      if (notAccepted && !outgoing.headersSent) {
        ready.delete(backend);
        forward(incoming, body, outgoing, triesLeft - 1);
      } else if (!outgoing.headersSent) outgoing.writeHead(502).end();
      else outgoing.destroy();
    });
    upstream.end(body);
  };

  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => forward(incoming, Buffer.concat(chunks), outgoing, 40));
  });
  // A balancer keeps its clients' idle connections about a minute (AWS ALB: 60 s), not Node's 5 s: a test that
  // pauses for about 5 s never sends a request on a connection the proxy is closing.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    closed = true;
    await healthLoop;
    agent.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await probe();
  return proxy;
}
