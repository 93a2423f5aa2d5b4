// Issue-40 cases that need worker PROCESSES sharing one SQLite file (the test process is the
// producer, a runner with `worker: false`): a kill -9 between ctx.commit and the final save; and
// collect, interrupt and stop reaching the session's lease holder while another worker runs (those
// three: @signalyard/test-utils/busy-workers, as on JetStream).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal } from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { BusyWorker, busyWorkersSuite } from '@signalyard/test-utils/busy-workers';
import { createRunner } from 'signalyard';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/inbox-worker.ts', import.meta.url));
/** A worker's report, an outcome. */
const WAIT_MS = 60_000;
const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-inbox-workers-'));
let files = 0;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** One worker process running fixtures/inbox-worker.ts on `path`, killed after the test. */
function worker(name: string, path: string, opts: { hang?: boolean }): BusyWorker {
  const w = new BusyWorker(name, {
    script,
    cwd: packageDir,
    args: [path],
    leaseMs: 1000,
    waitMs: WAIT_MS,
    config: { hang: opts.hang === true },
  });
  cleanup.push(() => w.kill());
  return w;
}

/** A fresh file and the producer over it; `close` closes the producer, its inbox and its store. */
function open() {
  const path = join(dir, `workers-${String(files++)}.db`);
  const inbox = new SqliteInbox({ path, pollMs: 50 });
  const store = new SqliteCheckpointStore({ path });
  const producer = createRunner({
    store,
    inbox,
    worker: false,
    agents: ['queue', 'collect', 'interrupt', 'desk', 'committer'].map((id) => ({
      id,
      engine: () => Promise.resolve({}),
    })),
  });
  const close = async (): Promise<void> => {
    await producer.close();
    await inbox.close();
    await store.close();
  };
  return { path, producer, close };
}

function setup(): ReturnType<typeof open> {
  const opened = open();
  cleanup.push(opened.close);
  return opened;
}

const say = (text: string) => signal(SignalKind.UserMessage, text);

describe('a kill -9 between ctx.commit and the final save', () => {
  it(
    're-applies the entry from the commit: the user message once, the claim answered outcome unknown',
    { timeout: 180_000 },
    async () => {
      const { path, producer } = setup();
      const first = worker('w1', path, { hang: true });
      const key = 'agent:committer:k';
      const receipt = await producer.accept(key, say('pay order 7'));
      const committed = await first.next((r) => r.type === 'committed', 'commit');
      first.kill(); // after the commit, before the final save
      const second = worker('w2', path, {});
      const outcome = await producer.outcome(receipt.receiptId, { timeoutMs: 60_000 });
      expect(outcome.status).toBe('completed');
      const history = (await producer.session(key))?.history ?? [];
      expect(history.map((m) => m.content)).toEqual([
        'pay order 7',
        `outcome unknown: not retried ${String(committed.key)}`,
      ]);
      // The key is the entry's receipt id: the same on the redelivery.
      expect(committed.key).toBe(`${receipt.receiptId}:write`);
      expect(second.reports.some((r) => r.type === 'committed')).toBe(false);
    },
  );

  it(
    'a crew call claimed after approval and cut off by the kill is answered `outcome unknown: not retried`, never run again',
    { timeout: 180_000 },
    async () => {
      const { path, producer } = setup();
      const first = worker('w1', path, { hang: true });
      const key = 'agent:desk:k';
      const asked = await producer.dispatch(key, say('refund order 7'));
      expect(asked.status).toBe('paused');
      const [pending] = asked.pendingApprovals ?? [];
      const approving = producer.approve(key, [{ id: pending?.id ?? '', approved: true }]);
      const ran = await first.next((r) => r.type === 'tool', 'the refund');
      expect(ran.key).toBe(pending?.idempotencyKey); // the asking turn's key
      first.kill(); // the refund ran (or not): its claim is committed, its result is not
      const second = worker('w2', path, {});
      const done = await approving;
      expect(done.status).toBe('completed');
      const history = (await producer.session(key))?.history ?? [];
      expect(history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['refund order 7']);
      expect(history.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['outcome unknown: not retried']);
      expect(second.reports.some((r) => r.type === 'tool')).toBe(false);
    },
  );
});

busyWorkersSuite({
  title: 'whenBusy and stops across two worker processes',
  signal,
  script,
  cwd: packageDir,
  waitMs: WAIT_MS,
  timeoutMs: 180_000,
  setup: () => {
    const { path, producer, close } = open();
    return Promise.resolve({ producer, args: [path], close });
  },
});
