/**
 * `npm start`: runs the service until SIGTERM or SIGINT, then finishes the
 * requests in flight, closes the storage and exits, within
 * SERVICE_SHUTDOWN_TIMEOUT whatever its log does (runtime/shutdown.ts). It
 * never exits because the database went away; requests get 503 until it is
 * back.
 */
import pino from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { createService } from './app.ts';
import { PLUGINS } from '../plugins/index.ts';
import { missingHeapFlags } from './heap.ts';
import { PluginError } from './plugins.ts';
import { exitAfterLog, openLogDestination, stopOnSignals } from './shutdown.ts';

const destination = openLogDestination();

async function main() {
  const config = loadConfig(process.env);
  const log = pino({ level: config.logLevel, base: undefined }, destination);
  const service = await createService(config, { plugins: PLUGINS, log });
  const port = await service.listen();
  service.log.info({ port, host: config.host, contextPath: config.contextPath || '/', storage: service.storage.kind }, 'service listening');
  const missing = missingHeapFlags();
  if (missing.length) {
    service.log.warn({ missing }, 'node was started without these flags (npm start passes them): REST latency may suffer during query exports (runtime/heap.ts)');
  }
  destination.flush();
  stopOnSignals(service, destination, config.shutdownTimeoutMs);
  process.on('unhandledRejection', (err) => service.log.error({ err: String(err) }, 'unhandled rejection'));
}

main().catch((err) => {
  const message = err instanceof ConfigError ? `configuration error: ${err.message}`
    : err instanceof PluginError ? `plugin error: ${err.message}`
      : `start failed: ${err instanceof Error ? err.stack : String(err)}`;
  console.error(message);
  exitAfterLog(destination, 1);
});
