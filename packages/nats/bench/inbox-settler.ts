// A settling worker process of inbox.bench.ts (not a benchmark itself): the Inbox contract's
// settle loop (acquire → read → beginDelivery → putOutcome → ack, no engine and no checkpoint
// store; acquire again every 100 ms while it finds nothing) over a JetStreamInbox or a
// PostgresInbox, in a process of its own as a worker runs beside the producers. Imports the
// built packages.
//
// argv: nats <nats url> <stream> <id> | pg <database url> <table> <id>
// IPC in: { type: 'run' } | { type: 'pause' } (answered { type: 'paused' } once no entry is in
// hand) | { type: 'count' } (answered { type: 'count', settled, unavailable }) | { type: 'stop' }.
// IPC out: { type: 'ready', als } once connected (`als`: whether its AsyncLocalStorage is active).
// env BENCH_ALS=1: everything runs with an AsyncLocalStorage active (a store set from the start,
// and around each command), as in an application with a tracing context manager (decisions-wave3 §6).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Inbox } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresInbox } from '@signalyard/store-postgres';

const [kind, url, name, id] = process.argv.slice(2);
if ((kind !== 'nats' && kind !== 'pg') || url === undefined || name === undefined || id === undefined)
  throw new Error('usage: inbox-settler.ts nats|pg <url> <stream or table> <id> (with an IPC channel)');
const als = new AsyncLocalStorage<object>();
const STORE = Object.freeze({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' });
const withAls = process.env.BENCH_ALS === '1';
// Set before anything is made: the inbox's connection, timers and promises carry it.
if (withAls) als.enterWith(STORE);
const send = (message: Record<string, unknown>): void => {
  if (process.connected) process.send?.(message);
};

/** How long a worker with nothing to take waits before it asks again. */
const POLL_MS = 100;
const limits = { maxPending: 10_000_000, maxPendingPerSession: 1_000_000 };
const inbox: Inbox =
  kind === 'nats'
    ? new JetStreamInbox({ servers: url, stream: name, ...limits })
    : new PostgresInbox({ connectionString: url, table: name, maxConnections: 8, ...limits });
let settled = 0;
let unavailable = 0;
let running = false;
let stopping = false;
let idle = true;
let wake: (() => void) | undefined;

async function settleOnce(): Promise<void> {
  const leases = await inbox.acquire(id as string, { leaseMs: 30_000, max: 50 });
  // Nothing to take: look again after a poll interval, as a Runner worker does (pollMs 100, as in the chaos test).
  if (leases.length === 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  for (const lease of leases) {
    try {
      for await (const entry of inbox.read(lease)) {
        await inbox.beginDelivery(entry);
        const outcome = { sessionKey: entry.sessionKey, agentId: 'a', status: 'completed' as const };
        await inbox.putOutcome(entry.receiptId, outcome, 60_000);
        await inbox.ack(entry);
        settled++;
        if (!running) break;
      }
      await inbox.release(lease);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'LEASE_LOST' && code !== 'INBOX_UNAVAILABLE') throw error;
      if (code === 'INBOX_UNAVAILABLE') unavailable++; // another worker (or this one, later) settles the rest
    }
  }
}

async function loop(): Promise<void> {
  while (!stopping) {
    if (!running) {
      if (!idle) send({ type: 'paused' });
      idle = true;
      await new Promise<void>((resolve) => (wake = resolve));
      continue;
    }
    idle = false;
    await settleOnce();
  }
}

/** Handles one IPC command. */
function command(m: { type: string }): void {
  if (m.type === 'run') {
    running = true;
    wake?.();
  } else if (m.type === 'pause') {
    running = false;
    if (idle) send({ type: 'paused' }); // else the loop says so once its entry in hand is settled
  } else if (m.type === 'count') send({ type: 'count', settled, unavailable });
  else if (m.type === 'stop') {
    stopping = true;
    running = false;
    wake?.();
  }
}

// The IPC channel was opened before the store was set: each command runs inside it again.
process.on('message', (raw) => {
  const m = raw as { type: string };
  if (withAls) als.run(STORE, () => command(m));
  else command(m);
});

// A first request connects (and, for PostgreSQL, prepares the pool) before the parent measures.
for (const lease of await inbox.acquire(id, { leaseMs: 1000, max: 1 })) await inbox.release(lease);
send({ type: 'ready', als: als.getStore() !== undefined });
await loop();
await inbox.close();
process.disconnect();
