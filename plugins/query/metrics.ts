/**
 * The query interface's figures, in the instance's registry
 * (runtime/metrics.ts):
 *
 * - service_query_jobs{state=QUEUED|RUNNING}: jobs this instance has queued
 *   and runs now;
 * - service_query_jobs_finished_total{status=COMPLETED|FAILED}: jobs this
 *   instance ended (not those it found stale, which another instance ran);
 * - service_query_export_bytes_total{format,kind=export|job}: bytes handed
 *   to clients by synchronous exports and by downloads of job results.
 */
import { pipeline, Readable, Transform } from 'node:stream';
import { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../../runtime/host.ts';
import type { Format } from './formats.ts';

export class QueryFigures {
  private readonly finished: Counter<'status'>;
  private readonly bytes: Counter<'format' | 'kind'>;

  constructor(metrics: Metrics, jobs: () => { queued: number; running: number }) {
    const registers = [metrics.registry];
    new Gauge({
      name: 'service_query_jobs', help: 'Query jobs this instance has queued or runs.', labelNames: ['state'] as const, registers,
      collect() {
        const { queued, running } = jobs();
        this.set({ state: 'QUEUED' }, queued);
        this.set({ state: 'RUNNING' }, running);
      },
    });
    this.finished = new Counter({ name: 'service_query_jobs_finished_total', help: 'Query jobs this instance ended, by status.', labelNames: ['status'] as const, registers });
    this.bytes = new Counter({
      name: 'service_query_export_bytes_total', help: 'Bytes of query results handed to clients, by format; kind: export (synchronous) or job (download of a job\'s result).',
      labelNames: ['format', 'kind'] as const, registers,
    });
  }

  jobFinished(status: 'COMPLETED' | 'FAILED') {
    this.finished.inc({ status });
  }

  /** The result as it is handed on, counted. Closing what is returned (the client left) closes the result, which stops its statement. */
  counted(result: Readable, format: Format, kind: 'export' | 'job'): Readable {
    const bytes = this.bytes.labels({ format, kind });
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes.inc(chunk.length);
        done(null, chunk);
      },
    });
    // Errors reach the client through `counter`; nothing is left to do with them here.
    pipeline(result, counter, () => undefined);
    return counter;
  }
}
