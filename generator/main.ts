/**
 * `npm run generate [-- --out DIR] [--standard]`: reads the metamodel from
 * the `meta` database of the configured storage (SERVICE_DATABASE_URL, or
 * the embedded database in SERVICE_DATA_DIR) and rewrites generated/. Where
 * there is no `meta` database (a fresh checkout, CI) or with --standard, the
 * checked-in standard metamodel is used. Any error exits non-zero.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_GENERATED_DIR, loadConfig } from '../runtime/config.ts';
import { readMetamodel } from '../runtime/storage/meta-database.ts';
import type { RawMetamodel } from '../runtime/metamodel/model.ts';
import { openStorage } from '../runtime/storage/connection.ts';
import { emitAll, writeGenerated } from './core.ts';
import { resolveMetamodel } from '../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../runtime/metamodel/standard.ts';

async function metaDatabaseModel(env: Record<string, string | undefined>): Promise<RawMetamodel | null> {
  const config = loadConfig(env);
  if (!config.databaseUrl && (config.dataDir.startsWith('memory://') || !existsSync(config.dataDir))) return null;
  const storage = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    const known = await storage.knex.raw(`select to_regclass('service.databases') is not null as ok`);
    if (!known.rows[0].ok) return null;
    const meta = await storage.knex.raw(`select 1 from service.databases where name = 'meta'`);
    return meta.rows.length ? await readMetamodel(storage.knex) : null;
  } finally {
    await storage.close();
  }
}

async function main() {
  const { values } = parseArgs({ options: { out: { type: 'string' }, standard: { type: 'boolean' } } });
  const fromDatabase = values.standard ? null : await metaDatabaseModel(process.env);
  const raw = fromDatabase ?? readStandardMetamodel();
  const model = resolveMetamodel(raw);
  const outDir = values.out ?? DEFAULT_GENERATED_DIR;
  const changed = writeGenerated(outDir, await emitAll(model));
  console.log(`generated ${outDir} from ${fromDatabase ? 'the meta database' : 'the standard metamodel'}: ${changed.length ? `changed ${changed.join(', ')}` : 'no changes'}`);
}

main().catch((err) => {
  console.error(`generate failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
