/**
 * A consistent copy of the embedded database's folder, taken while the
 * database goes on serving: PostgreSQL's own online backup. PGlite is one
 * backend, so a statement that runs for minutes holds every other request;
 * the query interface therefore runs its statements on such a copy, opened
 * in a thread of its own (readers.ts), and the database itself is
 * held only for the moments pg_backup_start (a checkpoint) and
 * pg_backup_stop take.
 *
 * The steps are pg_basebackup's: start the backup, copy the files (leaving
 * out what a backup leaves out), stop it, write the backup label it returns,
 * and copy the WAL written from the start to the stop. Opened, the copy
 * recovers from the label's checkpoint to the backup's end, and shows the
 * database as it was when the backup stopped: every commit before that, none
 * after.
 */
import { copyFile, cp, mkdir, open, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Knex } from 'knex';

/** Files and folders whose contents a backup leaves out (PostgreSQL's basebackup.c); the folders are made empty. */
const EMPTIED_FOLDERS = ['pg_wal', 'pg_dynshmem', 'pg_notify', 'pg_replslot', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans'];
const LEFT_OUT_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'backup_manifest', 'pg_internal.init']);
const WAL_SEGMENT = /^[0-9A-F]{24}$/;

export interface Snapshot {
  /** The database's WAL position right after the backup stopped: the copy holds everything written before it. */
  lsn: bigint;
}

/** The database's current WAL insert position: it moves with every change. */
export async function currentLsn(knex: Knex): Promise<bigint> {
  const r = await knex.raw(`select pg_current_wal_insert_lsn()::text as lsn`);
  return parseLsn(r.rows[0].lsn as string);
}

export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/**
 * Copies the database in `sourceDir` (served through `knex`) into the empty
 * folder `targetDir`. One at a time per database: PostgreSQL allows one
 * backup per session, and PGlite has one session.
 */
export async function takeSnapshot(knex: Knex, sourceDir: string, targetDir: string): Promise<Snapshot> {
  const started = await knex.raw(
    `select pg_walfile_name(pg_backup_start('query snapshot', true)) as first_wal,
            array(select oid::text from pg_database where datname <> current_database()) as others`,
  );
  const firstWal = started.rows[0].first_wal as string;
  // Only the service's own database is read: the template databases (a third of the files) are left out.
  const otherDatabases = (started.rows[0].others as string[]).map((oid) => join(sourceDir, 'base', oid));
  let stopped: {
    labelfile: string; spcmapfile: string | null; stop_wal: string; stop_used: string; last_wal: string; last_used: string; segment: string; lsn: string;
  };
  try {
    await copyFiles(sourceDir, targetDir, otherDatabases);
  } finally {
    // Stopped whatever happened to the copy: a backup left running would refuse the next one.
    const r = await knex.raw(
      `select s.labelfile, s.spcmapfile,
              pg_walfile_name(s.lsn) as stop_wal, (pg_walfile_name_offset(s.lsn)).file_offset::text as stop_used,
              pg_walfile_name(pg_current_wal_insert_lsn()) as last_wal,
              (pg_walfile_name_offset(pg_current_wal_insert_lsn())).file_offset::text as last_used,
              current_setting('wal_segment_size') as segment,
              pg_current_wal_insert_lsn()::text as lsn
       from pg_backup_stop(false) s`,
    );
    stopped = r.rows[0];
  }
  await writeFile(join(targetDir, 'backup_label'), stopped.labelfile);
  if (stopped.spcmapfile) await writeFile(join(targetDir, 'tablespace_map'), stopped.spcmapfile);
  // Of the segment the backup stopped in, and of the one written now, only the part written so far is needed.
  const written = new Map([[stopped.stop_wal, Number(stopped.stop_used)], [stopped.last_wal, Number(stopped.last_used)]]);
  await copyWal(join(sourceDir, 'pg_wal'), join(targetDir, 'pg_wal'), firstWal, stopped.last_wal, written, sizeOf(stopped.segment));
  return { lsn: parseLsn(stopped.lsn) };
}

async function copyFiles(sourceDir: string, targetDir: string, leftOut: string[]): Promise<void> {
  const emptied = new Set([...EMPTIED_FOLDERS.map((f) => join(sourceDir, f)), ...leftOut]);
  await cp(sourceDir, targetDir, {
    recursive: true,
    filter: (path) => {
      const parent = path.slice(0, path.lastIndexOf('/'));
      const name = path.slice(path.lastIndexOf('/') + 1);
      return !emptied.has(parent) && !LEFT_OUT_FILES.has(name) && name !== 'pgsql_tmp';
    },
  });
  for (const folder of [...EMPTIED_FOLDERS, 'pg_wal/archive_status', 'pg_wal/summaries', ...leftOut.map((d) => d.slice(sourceDir.length + 1))]) {
    await mkdir(join(targetDir, folder), { recursive: true });
  }
}

/**
 * The WAL segments from the backup's start to the position after its stop
 * (segment names sort as their positions). Of a segment in `written` only
 * the part written up to that offset (and the page after it) is copied, the
 * rest left as zeros, which recovery reads as the end of the WAL: a segment
 * is 16 MB, and a backup usually writes a few kilobytes of it.
 */
async function copyWal(sourceWal: string, targetWal: string, first: string, last: string, written: Map<string, number>, segmentBytes: number): Promise<void> {
  const timeline = first.slice(0, 8);
  const needed = (await readdir(sourceWal))
    .filter((name) => WAL_SEGMENT.test(name) && name.startsWith(timeline) && name >= first && name <= last);
  if (!needed.includes(first)) throw new Error(`the WAL segment ${first} of the snapshot is missing`);
  for (const name of needed) {
    const used = written.get(name);
    // pg_walfile_name() names the segment before a position on a boundary (offset 0): that one is whole.
    if (used) await copyStart(join(sourceWal, name), join(targetWal, name), used + WAL_PAGE, segmentBytes);
    else await copyFile(join(sourceWal, name), join(targetWal, name));
  }
}

const WAL_PAGE = 8192;

/** The first `bytes` of a file, in a file of `size` bytes (the rest a hole of zeros). */
async function copyStart(source: string, target: string, bytes: number, size: number): Promise<void> {
  const length = Math.min(size, Math.ceil(bytes / WAL_PAGE) * WAL_PAGE);
  const from = await open(source, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await from.read(buffer, 0, length, 0);
    const to = await open(target, 'w');
    try {
      await to.write(buffer, 0, bytesRead, 0);
      await to.truncate(size);
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}

/** A size setting as PostgreSQL shows it (`16MB`) in bytes. */
function sizeOf(text: string): number {
  const match = /^(\d+)\s*(B|kB|MB|GB)$/.exec(text);
  if (!match) throw new Error(`unexpected wal_segment_size ${text}`);
  return Number(match[1]) * { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[match[2] as 'B'];
}
