// Counts the messages this package's clients send the server (requests, publishes, acks: the
// client's `stats().outMsgs`) per operation: per accept (128 concurrent callers), per worker look
// (`acquire`), per settled entry (read → beginDelivery → putOutcome → ack, release), for one
// worker settling a backlog, as bench/inbox-settler.ts does. Counted work, not timings: it says
// the same on a loaded machine. Run: `pnpm exec tsx packages/nats/bench/requests.ts` (imports the
// sources; starts its own nats-server -js).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { JetStreamInbox } from '../src/index.js';

const SESSIONS = 100;
const ENTRIES = Number(process.env.ENTRIES ?? 3000);
const CALLERS = 128;
const port = 20_000 + Math.floor(Math.random() * 20_000);
const dir = mkdtempSync(join(tmpdir(), 'signalyard-nats-requests-'));
const server = spawn(
  process.env.NATS_SERVER ?? 'nats-server',
  ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir],
  {
    stdio: 'ignore',
  },
);
await new Promise((resolve) => setTimeout(resolve, 700));
const servers = `nats://127.0.0.1:${port}`;
const sent = (nc: NatsConnection): number => nc.stats().outMsgs;
const limits = { maxPending: 10_000_000, maxPendingPerSession: 1_000_000 };
type Phase = 'acquire' | 'read' | 'beginDelivery' | 'putOutcome' | 'ack' | 'release';

/** A settling worker (bench/inbox-settler.ts's loop) counting what each call sends, until `done()`. */
async function settle(nc: NatsConnection, worker: JetStreamInbox, id: string, done: () => boolean) {
  const by: Record<Phase, number> = { acquire: 0, read: 0, beginDelivery: 0, putOutcome: 0, ack: 0, release: 0 };
  let looks = 0;
  let settled = 0;
  const w0 = sent(nc);
  const count = async <T>(what: Phase, f: () => Promise<T>): Promise<T> => {
    const before = sent(nc);
    const out = await f();
    by[what] += sent(nc) - before;
    return out;
  };
  while (!done()) {
    looks++;
    // A lease long enough that a loaded machine does not lose it (nothing renews it here).
    const leases = await count('acquire', () => worker.acquire(id, { leaseMs: 300_000, max: 50 }));
    if (leases.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    for (const lease of leases) {
      const it = worker.read(lease)[Symbol.asyncIterator]();
      for (;;) {
        const step = await count('read', () => it.next());
        if (step.done === true) break;
        const entry = step.value;
        await count('beginDelivery', () => worker.beginDelivery(entry));
        await count('putOutcome', () =>
          worker.putOutcome(
            entry.receiptId,
            { sessionKey: entry.sessionKey, agentId: 'a', status: 'completed' },
            60_000,
          ),
        );
        await count('ack', () => worker.ack(entry));
        settled++;
        total.settled++;
      }
      await count('release', () => worker.release(lease));
    }
  }
  return { by, looks, settled, sent: sent(nc) - w0 };
}

const total = { settled: 0 };
try {
  const pc = await connect({ servers });
  const producer = new JetStreamInbox({ connection: pc, stream: 'REQ', ...limits });
  await producer.provision();
  const wcs = [await connect({ servers }), await connect({ servers })];
  const workers = wcs.map((connection) => new JetStreamInbox({ connection, stream: 'REQ', ...limits }));
  const runs = workers.map((w, i) => settle(wcs[i] as NatsConnection, w, `w${i}`, () => total.settled >= ENTRIES));
  const p0 = sent(pc);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < ENTRIES) {
        const i = next++;
        await producer.accept({
          sessionKey: `s${i % SESSIONS}`,
          signal: { kind: 'user_message', payload: 'go' },
          id: `e${i}`,
        });
      }
    }),
  );
  const acceptMs = performance.now() - start;
  console.log(
    `accept: ${((sent(pc) - p0) / ENTRIES).toFixed(2)} messages per accept (${ENTRIES} accepts, ${CALLERS} callers, 2 workers settling: ${Math.round(ENTRIES / (acceptMs / 1000))}/s)`,
  );
  for (const [i, run] of (await Promise.all(runs)).entries()) {
    const per = Object.entries(run.by)
      .map(([k, v]) => `${k} ${(v / Math.max(1, run.settled)).toFixed(2)}`)
      .join(', ');
    console.log(
      `worker ${i}: ${run.settled} settled, ${run.looks} looks, ${(run.by.acquire / run.looks).toFixed(1)} messages per look; ${(run.sent / Math.max(1, run.settled)).toFixed(2)} messages per settled entry in all (${per}; the rest: pulls, working(), renewals)`,
    );
  }
  console.log(`settled in all ${Math.round(ENTRIES / ((performance.now() - start) / 1000))}/s (accepts included)`);
  // A worker that keeps up: one entry on each of 50 keys, then one look (acquire) by a worker holding partitions already.
  const [wc0] = wcs as [NatsConnection];
  const [w0] = workers as [JetStreamInbox];
  let looks = 0;
  let lookSent = 0;
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 50; i++)
      await producer.accept({
        sessionKey: `s${i}`,
        signal: { kind: 'user_message', payload: 'go' },
        id: `k${round}-${i}`,
      });
    const before = sent(wc0);
    const leases = await w0.acquire('w0', { leaseMs: 30_000, max: 50 });
    lookSent += sent(wc0) - before;
    looks++;
    for (const lease of leases) {
      for await (const entry of w0.read(lease)) {
        await w0.beginDelivery(entry);
        await w0.ack(entry);
      }
      await w0.release(lease);
    }
  }
  console.log(`a look finding one entry on each of 50 keys: ${(lookSent / looks).toFixed(1)} messages`);
  const idle = sent(wc0);
  for (let i = 0; i < 10; i++) await w0.acquire('w0', { leaseMs: 30_000, max: 50 });
  console.log(`a look finding nothing: ${((sent(wc0) - idle) / 10).toFixed(1)} messages`);
  // Looks coming back to back (a Runner's worker looks again on every notice) while another worker holds every waiting key.
  const [, w1] = workers as [JetStreamInbox, JetStreamInbox];
  for (let i = 0; i < 50; i++)
    await producer.accept({ sessionKey: `s${i}`, signal: { kind: 'user_message', payload: 'go' }, id: `h${i}` });
  const held = await w1.acquire('w1', { leaseMs: 30_000, max: 100 });
  const busy = sent(wc0);
  for (let i = 0; i < 20; i++) await w0.acquire('w0', { leaseMs: 30_000, max: 50 });
  console.log(
    `20 looks back to back while another worker holds the ${held.length} keys waiting: ${((sent(wc0) - busy) / 20).toFixed(1)} messages per look`,
  );
  for (const w of workers) await w.close();
  await producer.close();
  for (const nc of [pc, ...wcs]) await nc.close();
} finally {
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
