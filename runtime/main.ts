/**
 * `npm start`: runs the service until SIGTERM or SIGINT, then finishes the
 * requests in flight and closes the storage. It never exits because the
 * database went away; requests get 503 until it is back.
 */
import pino from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { createService } from './app.ts';
import { PLUGINS } from '../plugins/index.ts';
import { missingHeapFlags } from './heap.ts';

async function main() {
  const config = loadConfig(process.env);
  // Buffered: a synchronous write per request line costs the request path several percent.
  const destination = pino.destination({ sync: false, minLength: 4096 });
  const log = pino({ level: config.logLevel, base: undefined }, destination);
  const service = await createService(config, { plugins: PLUGINS, log });
  const port = await service.listen();
  service.log.info({ port, host: config.host, contextPath: config.contextPath || '/', storage: service.storage.kind }, 'service listening');
  const missing = missingHeapFlags();
  if (missing.length) {
    service.log.warn({ missing }, 'node was started without these flags (npm start passes them): REST latency may suffer during query exports (runtime/heap.ts)');
  }
  destination.flush();
  // Lines reach the log within a second even when few requests come.
  setInterval(() => destination.flush(), 1000).unref();
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.log.info({ signal }, 'shutting down');
    await service.close();
    log.info('stopped');
    destination.flushSync();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('unhandledRejection', (err) => service.log.error({ err: String(err) }, 'unhandled rejection'));
}

main().catch((err) => {
  const message = err instanceof ConfigError ? `configuration error: ${err.message}` : `start failed: ${err instanceof Error ? err.stack : String(err)}`;
  console.error(message);
  process.exit(1);
});
