// Pruning under concurrent writers (history.md): four PROCESSES save new versions of one session
// at once, each through its own store with keepVersions 3, competing by compare-and-set. While they
// run and afterwards, the kept versions are gap-free and at most keepVersions + 1 (the current one
// and the three before it) — pruning in one process never removes a version another is about to
// keep, and never leaves a hole.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { collect } from '@signalyard/test-utils';
import { afterAll, expect, it } from 'vitest';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/saver-child.ts', import.meta.url));
const PROCESSES = 4;
const ROUNDS = 30;
const KEEP = 3;

const tables = new Set<string>();
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

/** Runs one writer process to its end; resolves with the versions it saved, in order. */
function writer(table: string, label: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@signalyard/source',
        '--import',
        'tsx',
        childScript,
        DATABASE_URL,
        table,
        'k',
        String(KEEP),
        String(ROUNDS),
        label,
      ],
      { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`writer ${label} exited with ${code}: ${stderr}`));
      else resolve((JSON.parse(stdout) as { saved: number[] }).saved);
    });
  });
}

/** The kept versions must be consecutive, newest first, and at most KEEP + 1 of them. */
function expectGapFree(versions: readonly number[]): void {
  expect(versions.length).toBeLessThanOrEqual(KEEP + 1);
  versions.forEach((version, i) => expect(version).toBe(versions[0]! - i));
}

describePostgres('pruning under concurrent writers', () => {
  it(`${PROCESSES} processes saving one session at once: versions stay gap-free, at most keepVersions + 1 kept`, async () => {
    const table = uniqueTable('pruning');
    tables.add(table);
    const observer = new PostgresCheckpointStore({
      connectionString: DATABASE_URL,
      table,
      keepVersions: KEEP,
      maxConnections: 1,
    });
    try {
      await observer.migrate();
      let running = true;
      const writers = Promise.all(Array.from({ length: PROCESSES }, (_, i) => writer(table, `w${i}`))).finally(() => {
        running = false;
      });
      let observations = 0;
      while (running) {
        const listed = await collect(observer.history('k'));
        expectGapFree(listed.map((c) => c.version));
        observations++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const saved = await writers;

      const total = PROCESSES * ROUNDS;
      expect(saved.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      for (const own of saved) expect(own).toEqual([...own].sort((a, b) => a - b));
      const listed = await collect(observer.history('k'));
      expect(listed.map((c) => c.version)).toEqual([total, total - 1, total - 2, total - 3]);
      const { rows } = await adminPool().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${observer.historyTable
          .split('.')
          .map((p) => `"${p}"`)
          .join('.')} WHERE key = 'k'`,
      );
      expect(rows[0]!.n).toBe(KEEP);
      expect(observations).toBeGreaterThan(0);
    } finally {
      await observer.close();
    }
  }, 240_000);
});
