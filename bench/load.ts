/**
 * The load generator, run as a child process of bench/rest.ts so that it
 * does not share the service's event loop. Each message is one run; every
 * request picks a random path from the run's list.
 */
import autocannon from 'autocannon';

export interface LoadJob {
  url: string;
  paths: string[];
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /** Requests per second in all (open-loop, as users would send them); absent: as many as the service answers. */
  rate?: number;
}

export interface LoadResult {
  ok: number;
  seconds: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
}

process.on('message', async (job: LoadJob) => {
  const { paths } = job;
  const r = await autocannon({
    url: job.url,
    headers: job.headers,
    connections: job.connections,
    duration: job.seconds,
    ...(job.rate ? { overallRate: job.rate } : {}),
    requests: [{ setupRequest: (req: object) => ({ ...req, path: paths[Math.floor(Math.random() * paths.length)] }) }],
  });
  const result: LoadResult = {
    ok: r['2xx'], seconds: r.duration, non2xx: r.non2xx, errors: r.errors + r.timeouts, p50: r.latency.p50, p99: r.latency.p99,
  };
  process.send!(result);
});
