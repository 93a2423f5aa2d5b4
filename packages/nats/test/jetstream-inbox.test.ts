import { randomBytes } from 'node:crypto';
import { jetstreamManager, AckPolicy } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { MemoryCheckpointStore, type InboxLease } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { deferred, rejectsCode, throwsCode } from '@signalyard/test-utils';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { createRunner } from 'signalyard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const text = (payload: string) => ({ kind: 'user_message' as const, payload });
const uniqueStream = (): string => `T_${randomBytes(6).toString('hex')}`;

describe('JetStreamInbox options', () => {
  it('refuses bad options with one ConfigError naming every problem', () => {
    const error = throwsCode(
      () =>
        new JetStreamInbox({
          servers: 'nats://127.0.0.1:4222',
          connection: {} as NatsConnection,
          stream: 'a.b',
          partitions: 0,
          leaseMs: -1,
          colour: 'blue',
        } as never),
      'CONFIG_INVALID',
    );
    for (const name of ['servers', 'stream', 'partitions', 'leaseMs', 'colour']) expect(error.message).toContain(name);
  });

  it('refuses connectOptions beside a connection, and a list of servers that holds a non-URL', () => {
    const error = throwsCode(
      () => new JetStreamInbox({ connection: { publish: () => undefined } as never, connectOptions: {} } as never),
      'CONFIG_INVALID',
    );
    expect(error.message).toContain('connectOptions');
    throwsCode(() => new JetStreamInbox({ servers: ['nats://a:4222', ''] }), 'CONFIG_INVALID');
    throwsCode(() => new JetStreamInbox({ servers: 'nats://a:4222', pollMs: 0 }), 'CONFIG_INVALID');
  });

  it('refuses options that are not an object, and a connection that is not one', () => {
    throwsCode(() => new JetStreamInbox(undefined as never), 'CONFIG_INVALID');
    throwsCode(() => new JetStreamInbox({ connection: 42 } as never), 'CONFIG_INVALID');
    throwsCode(() => new JetStreamInbox({ servers: [] }), 'CONFIG_INVALID');
  });

  it('touches no network when constructed: a bad server fails on first use, with INBOX_UNAVAILABLE', async () => {
    const inbox = new JetStreamInbox({ servers: 'nats://127.0.0.1:1', connectOptions: { reconnect: false } });
    await rejectsCode(inbox.provision(), 'INBOX_UNAVAILABLE');
    await inbox.close();
  });
});

describe('a Runner over a JetStreamInbox: configuration', () => {
  it('refuses a checkpoint store other processes cannot see (none, or a MemoryCheckpointStore) with INBOX_CONFIG_INVALID', async () => {
    const inbox = new JetStreamInbox({ servers: 'nats://127.0.0.1:1' });
    const agents = [{ id: 'main', engine: () => Promise.resolve({}) }];
    for (const store of [undefined, new MemoryCheckpointStore()]) {
      const error = throwsCode(() => createRunner({ agents, inbox, ...(store && { store }) }), 'INBOX_CONFIG_INVALID');
      expect(error.message).toContain('JetStreamInbox');
    }
    // A shared durable store is what it needs (nothing connects before start()).
    const store = new PostgresCheckpointStore({ connectionString: 'postgres://127.0.0.1:1/none' });
    const runner = createRunner({ agents, inbox, store, worker: true });
    await runner.close();
    await store.close();
    await inbox.close();
  });
});

describeNats('JetStreamInbox on a nats-server of its own', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  describe('provision', () => {
    it('creates the stream, one durable pull consumer per partition and the buckets; idempotent, also from many processes at once', async () => {
      const stream = uniqueStream();
      const options = { servers: server.url, stream, partitions: 4, leaseMs: 9000, outcomeTtlMs: 60_000 };
      const inboxes = [0, 1, 2].map(() => new JetStreamInbox(options));
      await Promise.all(inboxes.map((inbox) => inbox.provision()));
      await inboxes[0]?.provision();
      const nc = await connect({ servers: server.url });
      try {
        const jsm = await jetstreamManager(nc);
        const info = await jsm.streams.info(stream);
        expect(info.config.subjects).toEqual([`${stream}.*.*`]);
        expect(info.config.retention).toBe('workqueue');
        expect(info.config.duplicate_window).toBe(600_000 * 1e6);
        for (let n = 0; n < 4; n++) {
          const consumer = await jsm.consumers.info(stream, `${stream}_p${n}`);
          expect(consumer.config.ack_policy).toBe(AckPolicy.Explicit);
          expect(consumer.config.ack_wait).toBe(9000 * 1e6);
          expect(consumer.config.max_deliver).toBe(-1);
          expect(consumer.config.filter_subject).toBe(`${stream}.p${n}.*`);
        }
        const kvm = new Kvm(nc);
        expect((await (await kvm.open(`${stream}_LEASES`)).status()).ttl).toBe(9000);
        expect((await (await kvm.open(`${stream}_OUTCOMES`)).status()).ttl).toBe(60_000);
      } finally {
        await nc.close();
        for (const inbox of inboxes) await inbox.close();
      }
    });

    it('refuses an existing stream whose settings contradict the options, naming the setting', async () => {
      const stream = uniqueStream();
      const base = { servers: server.url, stream, partitions: 4 };
      const first = new JetStreamInbox(base);
      await first.provision();
      const cases: [Partial<Record<string, number>>, string][] = [
        [{ partitions: 8 }, 'partitions'],
        [{ dedupeWindowMs: 1000 }, 'dedupeWindowMs'],
        [{ maxPending: 50 }, 'maxPending'],
        [{ leaseMs: 5000 }, 'leaseMs'],
        [{ outcomeTtlMs: 5000 }, 'outcomeTtlMs'],
      ];
      for (const [change, setting] of cases) {
        const other = new JetStreamInbox({ ...base, ...change });
        const error = await rejectsCode(other.provision(), 'INBOX_CONFIG_INVALID');
        expect(error.message).toContain(setting);
        await other.close();
      }
      // the stream is untouched: the first inbox goes on serving
      const receipt = await first.accept({ sessionKey: 'k', signal: text('x'), id: 'i' });
      expect(receipt.seq).toBe('1');
      await first.close();
    });

    it('refuses a stream of the same name that is not an inbox (no partitions recorded), naming partitions', async () => {
      const stream = uniqueStream();
      const nc = await connect({ servers: server.url });
      await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: [`${stream}.*.*`] });
      await nc.close();
      const inbox = new JetStreamInbox({ servers: server.url, stream });
      const error = await rejectsCode(inbox.provision(), 'INBOX_CONFIG_INVALID');
      expect(error.message).toContain('partitions');
      await inbox.close();
    });

    it('a lease from another inbox (a token of another shape, or of a partition this stream has not) is INBOX_INPUT_INVALID', async () => {
      const inbox = new JetStreamInbox({ servers: server.url, stream: uniqueStream(), partitions: 2 });
      await inbox.provision();
      const foreign = { key: 'k', workerId: 'w', token: 'not-a-token', expiresAt: new Date().toISOString() };
      await rejectsCode(inbox.renew(foreign), 'INBOX_INPUT_INVALID');
      await rejectsCode(inbox.release({ ...foreign, token: `7.${'0'.repeat(16)}` }), 'INBOX_INPUT_INVALID');
      await inbox.close();
    });
  });

  describe('what operators see (InspectableInbox)', () => {
    it('pending lists the waiting entries by session key then seq, and leases the live key leases', async () => {
      const inbox = new JetStreamInbox({ servers: server.url, stream: uniqueStream(), partitions: 2 });
      await inbox.provision();
      await inbox.accept({ sessionKey: 'b', signal: text('b0'), id: '1' });
      await inbox.accept({ sessionKey: 'a', signal: text('a0'), id: '2' });
      await inbox.accept({ sessionKey: 'b', signal: text('b1'), id: '3' });
      const all = await inbox.pending();
      expect(all.map((e) => [e.sessionKey, e.signal.payload])).toEqual([
        ['a', 'a0'],
        ['b', 'b0'],
        ['b', 'b1'],
      ]);
      expect((await inbox.pending({ sessionKey: 'b', limit: 1 })).map((e) => e.signal.payload)).toEqual(['b0']);
      await rejectsCode(inbox.pending({ limit: 0 }), 'INBOX_INPUT_INVALID');
      expect(await inbox.leases()).toEqual([]);
      const leases = await inbox.acquire('worker-1', { leaseMs: 60_000, max: 1 });
      const shown = await inbox.leases();
      expect(shown.map((l) => [l.key, l.workerId])).toEqual([[leases[0]?.key, 'worker-1']]);
      expect(Date.parse(shown[0]?.expiresAt ?? '')).toBeGreaterThan(0);
      await inbox.release(leases[0] as InboxLease);
      expect(await inbox.leases()).toEqual([]);
      await inbox.close();
      await rejectsCode(inbox.pending(), 'INBOX_CLOSED');
    });
  });

  describe('entries on the stream', () => {
    it('seq is the stream sequence; each key has its subject in one partition, and an ack removes the entry from the stream', async () => {
      const stream = uniqueStream();
      const inbox = new JetStreamInbox({ servers: server.url, stream, partitions: 4 });
      await inbox.provision();
      const a = await inbox.accept({ sessionKey: 'a', signal: text('1'), id: 'x1' });
      const b = await inbox.accept({ sessionKey: 'b', signal: text('2'), id: 'x2' });
      expect([a.seq, b.seq]).toEqual(['1', '2']);
      const nc = await connect({ servers: server.url });
      try {
        const jsm = await jetstreamManager(nc);
        const subjects = (await jsm.streams.info(stream, { subjects_filter: `${stream}.>` })).state.subjects ?? {};
        expect(Object.keys(subjects)).toHaveLength(2);
        for (const subject of Object.keys(subjects))
          expect(subject).toMatch(new RegExp(`^${stream}\\.p[0-3]\\.[0-9a-f]{20}$`));
        const [lease] = await inbox.acquire('w', { leaseMs: 10_000, max: 1 });
        const [entry] = await collectEntries(inbox.read(lease as never));
        await inbox.beginDelivery(entry as never);
        await inbox.putOutcome(a.receiptId, { sessionKey: 'a', agentId: 'x', status: 'completed' }, 60_000);
        await inbox.ack(entry as never);
        expect((await jsm.streams.info(stream)).state.messages).toBe(1);
      } finally {
        await nc.close();
        await inbox.close();
      }
    });

    it('accepts tell other processes’ listeners their keys, once per notice however many entries a key got', async () => {
      const stream = uniqueStream();
      const inbox = new JetStreamInbox({ servers: server.url, stream, partitions: 4 });
      const listener = new JetStreamInbox({ servers: server.url, stream, partitions: 4 });
      await inbox.provision();
      const nc = await connect({ servers: server.url });
      try {
        const heard: string[] = [];
        const allHeard = deferred();
        listener.onNotify((key, what) => {
          heard.push(`${key}:${what}`);
          if (new Set(heard).size === 3) allHeard.resolve();
        });
        const wire: { ks?: string[]; k?: string; w: string }[] = [];
        const sub = nc.subscribe(`${stream}_NOTICES`, {
          callback: (_, m) => {
            wire.push(m.json<{ ks?: string[]; w: string }>());
          },
        });
        await nc.flush();
        await listener.pending(); // connected and subscribed: notices from now on reach it
        await Promise.all(
          ['a', 'b', 'c', 'a', 'b', 'c'].map((key, i) =>
            inbox.accept({ sessionKey: key, signal: text(`${i}`), id: `n${i}` }),
          ),
        );
        await allHeard.promise;
        expect([...new Set(heard)].sort()).toEqual(['a:entry', 'b:entry', 'c:entry']);
        await inbox.notify('d', 'stop'); // notify() is sent at once, on its own
        await nc.flush();
        for (const m of wire.filter((m) => m.ks !== undefined)) {
          expect(m.w).toBe('entry');
          expect(new Set(m.ks).size, JSON.stringify(m.ks)).toBe(m.ks?.length);
        }
        expect(wire.flatMap((m) => m.ks ?? [])).toEqual(expect.arrayContaining(['a', 'b', 'c']));
        expect(wire.filter((m) => m.k !== undefined)).toEqual([{ k: 'd', w: 'stop' }]);
        sub.unsubscribe();
      } finally {
        await nc.close();
        await listener.close();
        await inbox.close();
      }
    });
  });
});

async function collectEntries<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describeNats('JetStreamInbox partition consumers', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('a worker whose process stalls past leaseMs stops settling: renew is false and read rejects with LEASE_LOST', async () => {
    const inbox = new JetStreamInbox({ servers: server.url, stream: uniqueStream(), partitions: 1, leaseMs: 600 });
    await inbox.provision();
    await inbox.accept({ sessionKey: 'k', signal: text('x'), id: 'x' });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    expect(lease?.key).toBe('k');
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      // the event loop is blocked: no working(), no renewal of the partition lease
    }
    await expect.poll(async () => inbox.renew(lease as InboxLease), { timeout: 45_000 }).toBe(false);
    await rejectsCode(collectEntries(inbox.read(lease as InboxLease)), 'LEASE_LOST');
    await inbox.close();
  }, 60_000);

  it('the holder of a partition whose consumer another holder recreated loses its leases in it', async () => {
    const stream = uniqueStream();
    const inbox = new JetStreamInbox({ servers: server.url, stream, partitions: 1 });
    await inbox.provision();
    await inbox.accept({ sessionKey: 'k', signal: text('x'), id: 'x' });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    expect(await inbox.renew(lease as InboxLease)).toBe(true);
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.delete(stream, `${stream}_p0`);
    await nc.close();
    // A hang guard, not a speed check: under load the holder may take a while to notice.
    await expect.poll(async () => inbox.renew(lease as InboxLease), { timeout: 45_000 }).toBe(false);
    await inbox.close();
  }, 60_000);
});
