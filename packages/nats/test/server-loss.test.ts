import type { InboxEntry, InboxLease } from '@signalyard/core';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { JetStreamInbox } from '@signalyard/nats';
import { rejectsCode } from '@signalyard/test-utils';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { afterEach, beforeEach, expect, it } from 'vitest';

const text = (payload: string) => ({ kind: 'user_message' as const, payload });

/** Resolves at the connection's next status of `type`. */
async function nextStatus(nc: NatsConnection, type: 'disconnect' | 'reconnect'): Promise<void> {
  for await (const status of nc.status()) if (status.type === type) return;
}

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Accepts with the same id until the inbox answers (a retry with the same id is never a duplicate). */
async function acceptRetrying(inbox: JetStreamInbox, sessionKey: string, id: string): Promise<{ failures: string[] }> {
  const failures: string[] = [];
  for (;;) {
    try {
      await inbox.accept({ sessionKey, signal: text(id), id });
      return { failures };
    } catch (error) {
      const code = (error as { code?: string }).code ?? String(error);
      if (code !== 'INBOX_UNAVAILABLE' && code !== 'INBOX_OUTCOME_UNKNOWN') throw error;
      failures.push(code);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Settles every entry waiting: leases every key, reads, puts an outcome, acknowledges. Returns the payloads per key, in read order. */
async function drainAll(inbox: JetStreamInbox): Promise<Map<string, string[]>> {
  const seen = new Map<string, string[]>();
  for (;;) {
    const leases: InboxLease[] = await inbox.acquire('drainer', { leaseMs: 30_000, max: 100 });
    if (leases.length === 0) return seen;
    for (const lease of leases) {
      for (const entry of await all<InboxEntry>(inbox.read(lease))) {
        await inbox.beginDelivery(entry);
        await inbox.putOutcome(
          entry.receiptId,
          { sessionKey: entry.sessionKey, agentId: 'a', status: 'completed' },
          60_000,
        );
        await inbox.ack(entry);
        seen.set(entry.sessionKey, [...(seen.get(entry.sessionKey) ?? []), entry.signal.payload as string]);
      }
      await inbox.release(lease);
    }
  }
}

describeNats('JetStreamInbox when the server goes away', () => {
  let server: NatsServer;
  let nc: NatsConnection;
  beforeEach(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
  });
  afterEach(async () => {
    await nc.close().catch(() => undefined);
    await server.stop();
  });

  it('accept fails fast with INBOX_UNAVAILABLE while the connection is down (nothing written), and works again after the reconnect', async () => {
    const inbox = new JetStreamInbox({ connection: nc, stream: 'LOSS', partitions: 2 });
    await inbox.provision();
    await inbox.accept({ sessionKey: 'k', signal: text('before'), id: 'before' });
    const down = nextStatus(nc, 'disconnect');
    await server.kill();
    await down;
    await rejectsCode(inbox.accept({ sessionKey: 'k', signal: text('during'), id: 'during' }), 'INBOX_UNAVAILABLE');
    const up = nextStatus(nc, 'reconnect');
    await server.restart();
    await up;
    await acceptRetrying(inbox, 'k', 'during');
    const drained = await drainAll(inbox);
    expect(drained.get('k')).toEqual(['before', 'during']);
    await inbox.close();
    expect(nc.isClosed()).toBe(false); // a connection given to the inbox stays the caller's
  });

  it('a lost PubAck is INBOX_OUTCOME_UNKNOWN; the retry with the same id returns the entry written once', async () => {
    // The server stops answering right when the entry is sent: it receives the message, and answers after it resumes.
    const paused = new Proxy(nc, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== 'request' || typeof value !== 'function')
          return typeof value === 'function' ? (value.bind(target) as unknown) : value;
        return async (subject: string, ...rest: unknown[]) => {
          if (subject.startsWith('PAUSE.p') && pauseNext) {
            pauseNext = false;
            await server.pause(); // stopped before the entry is sent
          }
          return (value as (...args: unknown[]) => unknown).call(target, subject, ...rest);
        };
      },
    });
    let pauseNext = false;
    const inbox = new JetStreamInbox({ connection: paused, stream: 'PAUSE', partitions: 2, publishTimeoutMs: 500 });
    await inbox.provision();
    pauseNext = true;
    await rejectsCode(inbox.accept({ sessionKey: 'k', signal: text('m'), id: 'same' }), 'INBOX_OUTCOME_UNKNOWN');
    server.resume();
    const retried = await inbox.accept({ sessionKey: 'k', signal: text('m'), id: 'same' });
    expect(retried.seq).toBe('1'); // the first attempt was written; the retry appended nothing
    expect((await drainAll(inbox)).get('k')).toEqual(['m']);
    await inbox.close();
  });

  it('a server killed (kill -9) and restarted mid-run on its file store loses nothing accepted, and settles nothing twice', async () => {
    const inbox = new JetStreamInbox({ connection: nc, stream: 'CRASH', partitions: 4, publishTimeoutMs: 1000 });
    await inbox.provision();
    const keys = Array.from({ length: 10 }, (_, i) => `session-${i}`);
    const accepted = new Map<string, string[]>(keys.map((k) => [k, []]));
    let failures = 0;
    const produce = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i++) {
        const key = keys[i % keys.length] as string;
        failures += (await acceptRetrying(inbox, key, `m${i}`)).failures.length;
        accepted.get(key)?.push(`m${i}`);
      }
    };
    await produce(0, 100);
    const settledBefore = await drainAll(inbox);
    await produce(100, 150);
    const restarting = (async () => {
      await server.kill('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await server.restart();
    })();
    await produce(150, 250); // accepts during the outage are retried with their ids until answered
    await restarting;
    const settledAfter = await drainAll(inbox);
    for (const key of keys) {
      const settled = [...(settledBefore.get(key) ?? []), ...(settledAfter.get(key) ?? [])];
      expect(settled).toEqual(accepted.get(key)); // every accepted entry once, in accept order
    }
    console.log(`server restart: 250 accepted, ${failures} accept attempts failed during the outage and were retried`);
    await inbox.close();
  });
});
