// `signalyard worker --config <module>`: settles a SQLite inbox's entries until stopped, in-process
// (stopped by its abort signal) and as a child process through the bin (drained by SIGTERM).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '@signalyard/cli';
import type { InboxReceipt } from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, ensureBuiltCli, lines, runInProcess } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-worker-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
const CONFIG = join(FIXTURES, 'worker', 'echo.config.js');

let files = 0;
/** A new SQLite file with `texts` accepted for `agent:echo:main`, and the receipts. */
async function acceptedDb(texts: readonly string[]): Promise<{ db: string; receipts: InboxReceipt[] }> {
  const db = join(dir, `worker-${++files}.db`);
  const inbox = new SqliteInbox({ path: db });
  const receipts: InboxReceipt[] = [];
  for (const text of texts) {
    receipts.push(
      await inbox.accept({
        sessionKey: 'agent:echo:main',
        signal: { kind: 'user_message', payload: { text } },
        id: text,
      }),
    );
  }
  await inbox.close();
  return { db, receipts };
}

/** Waits for every receipt's outcome (read by another connection) and returns their statuses. */
async function outcomes(db: string, receipts: readonly InboxReceipt[]): Promise<string[]> {
  const inbox = new SqliteInbox({ path: db, pollMs: 20 });
  try {
    const all = await Promise.all(receipts.map((r) => inbox.outcome(r.receiptId, { timeoutMs: 60_000 })));
    return all.map((o) => o.status);
  } finally {
    await inbox.close();
  }
}

/** The session's saved history, as `role: content` lines. */
async function history(db: string): Promise<string[]> {
  const store = new SqliteCheckpointStore({ path: db });
  try {
    const saved = await store.load('agent:echo:main');
    const data = saved?.data as { history?: { role: string; content: string }[] } | undefined;
    return (data?.history ?? []).map((m) => `${m.role}: ${m.content}`);
  } finally {
    await store.close();
  }
}

describe('signalyard worker', () => {
  it('settles the inbox in seq order, prints its status, and drains on abort (exit 0, leases released)', async () => {
    const { db, receipts } = await acceptedDb(['one', 'two', 'three']);
    const controller = new AbortController();
    let stdout = '';
    process.env.WORKER_DB = db; // the config module reads this process's environment
    const running = run(['worker', '--config', CONFIG, '--id', 'w-test', '--status-every', '1'], {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stdout += s) },
      cwd: dir,
      abortSignal: controller.signal,
    });
    expect(await outcomes(db, receipts)).toEqual(['completed', 'completed', 'completed']);
    controller.abort();
    expect(await running).toBe(0);
    const out = lines(stdout);
    expect(out[0]).toMatch(/^worker w-test: settling the inbox of ".*echo\.config\.js" \(SIGTERM or Ctrl-C drains\)$/);
    expect(out).toContain('worker w-test: draining (aborted): finishing the turns in flight');
    expect(out.at(-1)).toBe('worker w-test: stopped: settled 3, failed 0, dead letters 0, leases held 0');
    expect(await history(db)).toEqual([
      'user: one',
      'assistant: echo: one',
      'user: two',
      'assistant: echo: two',
      'user: three',
      'assistant: echo: three',
    ]);
    const inbox = new SqliteInbox({ path: db });
    expect(await inbox.leases()).toEqual([]);
    expect(await inbox.pending()).toEqual([]);
    await inbox.close();
  });

  it('refuses a config without a durable inbox, a producer config and a bad --id (exit 2, nothing settled)', async () => {
    const { db } = await acceptedDb(['x']);
    process.env.WORKER_DB = db;
    process.env.WORKER_MODE = 'no-inbox';
    const noInbox = await runInProcess(['worker', '--config', CONFIG], { cwd: dir });
    process.env.WORKER_MODE = 'producer';
    const producer = await runInProcess(['worker', '--config', CONFIG], { cwd: dir });
    delete process.env.WORKER_MODE;
    const badId = await runInProcess(['worker', '--config', CONFIG, '--id', 'has space'], { cwd: dir });
    expect(noInbox.code).toBe(2);
    expect(noInbox.stderr).toMatch(/gives no durable inbox: a worker settles the entries of RunnerOptions.inbox/);
    expect(badId.code).toBe(2);
    expect(badId.stderr).toMatch(/--id "has space": expected 1–200 letters, digits and \. _ : @ -/);
    expect(producer.code).toBe(2);
    expect(producer.stderr).toMatch(/sets worker: false \(a producer\)/);
    const inbox = new SqliteInbox({ path: db });
    expect(await inbox.pending()).toHaveLength(1);
    await inbox.close();
  });

  it('as a child process: SIGTERM drains (exit 0); the entries accepted before are settled', async () => {
    const bin = ensureBuiltCli();
    const { db, receipts } = await acceptedDb(['a', 'b']);
    const child = spawn(process.execPath, [bin, 'worker', '--config', CONFIG, '--status-every', '1'], {
      cwd: dir,
      env: { ...process.env, WORKER_DB: db, WORKER_MODE: 'worker' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(await outcomes(db, receipts)).toEqual(['completed', 'completed']);
    child.kill('SIGTERM');
    expect(await exited, stderr).toBe(0);
    expect(stdout).toMatch(/^worker [^:]+:\d+: settling the inbox/m);
    expect(lines(stdout).at(-1)).toMatch(/: stopped: settled 2, failed 0, dead letters 0, leases held 0$/);
    expect(await history(db)).toEqual(['user: a', 'assistant: echo: a', 'user: b', 'assistant: echo: b']);
  }, 120_000);

  it('as a child process: a second signal while draining a turn that does not end exits 1 at once', async () => {
    const bin = ensureBuiltCli();
    const { db } = await acceptedDb(['wait']);
    const child = spawn(process.execPath, [bin, 'worker', '--config', CONFIG], {
      cwd: dir,
      env: { ...process.env, WORKER_DB: db, WORKER_MODE: 'stuck' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const seen = (stream: 'stdout' | 'stderr', text: string) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if ((stream === 'stdout' ? stdout : stderr).includes(text)) resolve();
        };
        child[stream].on('data', check);
        check();
      });
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await seen('stderr', 'turn started');
    child.kill('SIGTERM');
    await seen('stdout', 'draining (SIGTERM)');
    child.kill('SIGTERM');
    expect(await exited, `${stdout}\n${stderr}`).toBe(1);
    expect(stderr).toContain('signalyard: worker: SIGTERM while draining: exiting now, the turns in flight abandoned');
    expect(stdout).not.toContain('stopped');
  }, 120_000);
});
