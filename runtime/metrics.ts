/**
 * The Prometheus figures of one service instance (prom-client), in a
 * registry of its own rather than prom-client's global one: tests start
 * many services in one process, and each must count only its own.
 *
 * With SERVICE_METRICS_PORT set, a listener of its own answers GET /metrics
 * in Prometheus's text format, without authentication (it must not be
 * reachable from outside; the figures name no database, tenant, user or
 * object, only route templates). Plugins record their own figures in the
 * same registry (PluginHost.metrics): the query plugin its jobs and export
 * bytes, for instance. Names:
 *
 * - service_http_requests_total{method,route,status}, and
 *   service_http_request_duration_seconds{method,route}: until the answer
 *   starts (a streamed export's own length is not in it); `route` is a
 *   template (runtime/route-templates.ts);
 * - service_database_pool_connections{pool,state=used|free} and
 *   service_database_pool_pending_acquires{pool}: `service` is the pool of
 *   the REST interface (on the embedded database its one connection, and the
 *   queue waiting for it), `query` the query interface's on PostgreSQL;
 * - service_sign_in_failures_total{method,status}: 401, 403 and 429 of the
 *   authentication, by sign-in method (`none`: no credentials at all);
 * - service_interactive_{pauses,rate_waits}_total and
 *   service_interactive_{pause,rate_wait}_seconds_total: how often and how
 *   long bulk work gave way to interactive requests (runtime/interactive.ts);
 * - Node's and the process's own (process_*, nodejs_*), when the listener is on.
 */
import http from 'node:http';
import type { Context, Next } from 'koa';
import type { Knex } from 'knex';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GateFigures } from './interactive.ts';
import { routeTemplate, type RouteSources } from './route-templates.ts';

/** Seconds; most REST calls end within tens of milliseconds, exports take seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface PoolFigures {
  used: number;
  free: number;
  /** Callers waiting for a connection. */
  pending: number;
}

/** What plugins see of the instance's figures (PluginHost.metrics). */
export interface Metrics {
  /** Where a plugin registers its own counters and gauges (`registers: [metrics.registry]`). */
  registry: Registry;
  /** A connection pool, read at each scrape. */
  addPool(name: string, read: () => PoolFigures): void;
}

export class ServiceMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly pools = new Map<string, () => PoolFigures>();
  private readonly requests = new Counter({
    name: 'service_http_requests_total', help: 'Requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const, registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'service_http_request_duration_seconds', help: 'Time until the answer started, by method and route template.',
    labelNames: ['method', 'route'] as const, buckets: LATENCY_BUCKETS, registers: [this.registry],
  });
  private readonly signInFailures = new Counter({
    name: 'service_sign_in_failures_total', help: 'Refused sign-ins (401, 403, 429) by sign-in method; none: no credentials.',
    labelNames: ['method', 'status'] as const, registers: [this.registry],
  });

  constructor() {
    const pools = this.pools;
    new Gauge({
      name: 'service_database_pool_connections', help: 'Connections of a database pool, used or free.',
      labelNames: ['pool', 'state'] as const, registers: [this.registry],
      collect() {
        for (const [pool, read] of pools) {
          const { used, free } = read();
          this.set({ pool, state: 'used' }, used);
          this.set({ pool, state: 'free' }, free);
        }
      },
    });
    new Gauge({
      name: 'service_database_pool_pending_acquires', help: 'Callers waiting for a connection of a database pool.',
      labelNames: ['pool'] as const, registers: [this.registry],
      collect() {
        for (const [pool, read] of pools) this.set({ pool }, read().pending);
      },
    });
  }

  addPool(name: string, read: () => PoolFigures) {
    this.pools.set(name, read);
  }

  request(method: string, route: string, status: number, seconds: number) {
    this.requests.inc({ method, route, status });
    this.latency.observe({ method, route }, seconds);
  }

  signInFailed(method: string, status: number) {
    this.signInFailures.inc({ method, status });
  }

  /** The interactive gate's pauses and rate-cap waits, read at each scrape. */
  addGate(figures: GateFigures) {
    const total = (name: string, help: string, read: () => number) => new Counter({
      name, help, registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
    total('service_interactive_pauses_total', 'Pauses of bulk work for interactive requests in flight.', () => figures.pauses);
    total('service_interactive_pause_seconds_total', 'Time bulk work paused for interactive requests.', () => figures.pausedMs / 1000);
    total('service_interactive_rate_waits_total', 'Waits of bulk work for the rate cap (SERVICE_QUERY_BULK_RATE).', () => figures.rateWaits);
    total('service_interactive_rate_wait_seconds_total', 'Time bulk work waited for the rate cap.', () => figures.rateWaitedMs / 1000);
  }

  /** Serves GET /metrics, and nothing else, on a listener of its own. */
  async listen(port: number, host: string): Promise<http.Server> {
    collectDefaultMetrics({ register: this.registry });
    const server = http.createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server;
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse) {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404).end();
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    try {
      const text = await this.registry.metrics();
      res.writeHead(200, { 'Content-Type': this.registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : text);
    } catch {
      res.writeHead(500).end();
    }
  }
}

/** Koa middleware, outside the error middleware: counts each request under its route template once it is answered. */
export function requestFigures(metrics: ServiceMetrics, sources: RouteSources) {
  return async function recordRequest(ctx: Context, next: Next) {
    const started = process.hrtime.bigint();
    // As it came: the context path is taken off further in.
    const path = ctx.path;
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.request(ctx.method, routeTemplate(ctx.method, path, sources), ctx.status, seconds);
    }
  };
}

/** knex's pool (tarn): on the embedded database its one connection, and who waits for it. */
export function knexPool(knex: Knex): () => PoolFigures {
  type Tarn = { numUsed(): number; numFree(): number; numPendingAcquires(): number };
  return () => {
    const pool = (knex.client as { pool?: Tarn }).pool;
    return pool ? { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() } : { used: 0, free: 0, pending: 0 };
  };
}
