/**
 * The load generator, run as a child process of bench/rest.ts so that it
 * does not share the service's event loop. Each message is one run; every
 * request picks a random path from the run's list.
 */
import autocannon from 'autocannon';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoadJob {
  url: string;
  paths: string[];
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /**
   * Requests per second in all, open-loop: one every 1/rate s whether or not
   * earlier ones were answered, each timed from when it was due (so a
   * stall counts for every request it held up). Absent: closed-loop, as many
   * as the service answers (autocannon). autocannon's own overallRate is not
   * used: it sends each second's requests in one burst and then waits, which
   * measures the burst's queue, not a steady load.
   */
  rate?: number;
  /** Open-loop only: headers of each request in turn instead of `headers` (e.g. one user after another). */
  headerSets?: Record<string, string>[];
}

export interface LoadResult {
  ok: number;
  seconds: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
  /** Open-loop only: the slowest requests, as [seconds into the run when due, milliseconds taken]. */
  worst?: [number, number][];
  /** Open-loop only: the longest the generator's own event loop was held up (ms); a stall there delays sending, not the service. */
  loopMaxMs?: number;
  /** Filled in by the caller: the longest the service's event loop was held up meanwhile (ms). */
  serviceLoopMaxMs?: number;
  /** Open-loop only: what the first few failed requests said. */
  errorSamples?: string[];
  /** Filled in by the caller: how long the export that ran alongside took (s). */
  exportSeconds?: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0;
}

async function openLoop(job: LoadJob): Promise<LoadResult> {
  // fifo: every connection stays in use; with lifo some sit idle past the server's keep-alive timeout and a
  // request sent just as the server closes one fails (ECONNRESET), which is the generator's doing, not the service's.
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections, scheduling: 'fifo' });
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const base = new URL(job.url);
  const interval = 1000 / job.rate!;
  const started = performance.now();
  const end = started + job.seconds * 1000;
  const latencies: number[] = [];
  const timeline: [number, number][] = [];
  const errorSamples: string[] = [];
  let non2xx = 0;
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  const send = (due: number) => {
    const path = job.paths[Math.floor(Math.random() * job.paths.length)];
    const headers = job.headerSets ? job.headerSets[sent++ % job.headerSets.length] : job.headers;
    const done = new Promise<void>((resolve) => {
      const req = http.get({ host: base.hostname, port: base.port, path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode! >= 200 && res.statusCode! < 300) {
            const ms = performance.now() - due;
            latencies.push(ms);
            timeline.push([(due - started) / 1000, ms]);
          }
          else non2xx++;
          resolve();
        });
      });
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', (err) => {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(`${((due - started) / 1000).toFixed(2)} s: ${String(err)}`);
        resolve();
      });
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  let next = started;
  while (next < end) {
    const now = performance.now();
    while (next <= now && next < end) { send(next); next += interval; }
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
  await Promise.all(inFlight);
  agent.destroy();
  loop.disable();
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length, seconds: (performance.now() - started) / 1000, non2xx, errors,
    p50: percentile(latencies, 50), p99: percentile(latencies, 99),
    loopMaxMs: loop.max / 1e6,
    errorSamples,
    worst: timeline.sort((a, b) => b[1] - a[1]).slice(0, 8).map(([at, ms]) => [Number(at.toFixed(2)), Number(ms.toFixed(1))]),
  };
}

process.on('message', async (job: LoadJob) => {
  if (job.rate) {
    process.send!(await openLoop(job));
    return;
  }
  const { paths } = job;
  const r = await autocannon({
    url: job.url,
    headers: job.headers,
    connections: job.connections,
    duration: job.seconds,
    requests: [{ setupRequest: (req: object) => ({ ...req, path: paths[Math.floor(Math.random() * paths.length)] }) }],
  });
  const result: LoadResult = {
    ok: r['2xx'], seconds: r.duration, non2xx: r.non2xx, errors: r.errors + r.timeouts, p50: r.latency.p50, p99: r.latency.p99,
  };
  process.send!(result);
});
