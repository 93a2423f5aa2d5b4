// A JetStreamInbox has no setup step (inbox.md, "API"): its first use creates what is missing on
// the server and checks what exists; `provision()` does the same, earlier, when asked.
import { randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { InboxEntry, InboxLease } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { collect, rejectsCode } from '@signalyard/test-utils';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const text = (payload: string) => ({ kind: 'user_message' as const, payload });
const uniqueStream = (): string => `F_${randomBytes(6).toString('hex')}`;

describeNats('JetStreamInbox: provisioned on first use', () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
    jsm = await jetstreamManager(nc);
  });
  afterAll(async () => {
    await nc.close();
    await server.stop();
  });

  /** The JetStream API requests every connection sends from now on, by subject (a plain subscriber sees them). */
  async function apiRequests(): Promise<{
    count: (subject: string) => number;
    starting: (prefix: string) => number;
    stop: () => void;
  }> {
    const seen: string[] = [];
    const sub = nc.subscribe('$JS.API.>', {
      callback: (_, m) => {
        seen.push(m.subject);
      },
    });
    await nc.flush();
    return {
      count: (subject) => seen.filter((s) => s === subject).length,
      starting: (prefix) => seen.filter((s) => s.startsWith(prefix)).length,
      stop: () => {
        sub.unsubscribe();
      },
    };
  }

  it('a new inbox on a fresh server accepts, leases, reads and settles without provision()', async () => {
    const stream = uniqueStream();
    const inbox = new JetStreamInbox({ servers: server.url, stream, partitions: 4 });
    try {
      const receipt = await inbox.accept({ sessionKey: 'k', signal: text('hello'), id: 'first' });
      expect(receipt.seq).toBe('1');
      const info = await jsm.streams.info(stream);
      expect(info.config.description).toContain('partitions=4');
      for (let n = 0; n < 4; n++)
        expect((await jsm.consumers.info(stream, `${stream}_p${n}`)).config.durable_name).toBe(`${stream}_p${n}`);
      const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
      expect(lease?.key).toBe('k');
      const [entry] = await collect(inbox.read(lease as InboxLease));
      expect(entry?.signal.payload).toBe('hello');
      expect(await inbox.beginDelivery(entry as InboxEntry)).toBe(1);
      await inbox.settle(entry as InboxEntry, { sessionKey: 'k', agentId: 'a', status: 'completed' }, 60_000);
      expect((await inbox.outcome(receipt.receiptId)).status).toBe('completed');
      expect((await jsm.streams.info(stream)).state.messages).toBe(0);
    } finally {
      await inbox.close();
    }
  });

  it('concurrent first calls of one inbox share one provisioning', async () => {
    const stream = uniqueStream();
    const inbox = new JetStreamInbox({ servers: server.url, stream, partitions: 2 });
    const api = await apiRequests();
    try {
      await Promise.all([
        inbox.accept({ sessionKey: 'a', signal: text('1'), id: '1' }),
        inbox.accept({ sessionKey: 'b', signal: text('2'), id: '2' }),
        inbox.pending(),
        inbox.leases(),
        collect(inbox.deadLetters()),
        inbox.provision(),
      ]);
      await inbox.accept({ sessionKey: 'c', signal: text('3'), id: '3' });
      await inbox.provision(); // once per instance: resolves without another look
      await nc.flush();
      expect(api.count(`$JS.API.STREAM.CREATE.${stream}`)).toBe(1);
      expect(api.count(`$JS.API.STREAM.INFO.${stream}_EVENTS`)).toBe(1);
      expect(api.count(`$JS.API.CONSUMER.INFO.${stream}.${stream}_p0`)).toBe(1);
      expect((await inbox.pending()).map((e) => e.signal.payload).sort()).toEqual(['1', '2', '3']);
    } finally {
      api.stop();
      await inbox.close();
    }
  });

  it('a second inbox over an existing stream checks it and creates nothing', async () => {
    const stream = uniqueStream();
    const first = new JetStreamInbox({ servers: server.url, stream, partitions: 2 });
    await first.accept({ sessionKey: 'k', signal: text('1'), id: '1' });
    const api = await apiRequests();
    const second = new JetStreamInbox({ servers: server.url, stream, partitions: 2 });
    try {
      expect((await second.accept({ sessionKey: 'k', signal: text('2'), id: '2' })).seq).toBe('2');
      await nc.flush();
      expect(api.count(`$JS.API.STREAM.CREATE.${stream}`)).toBe(0);
      expect(api.count(`$JS.API.STREAM.CREATE.${stream}_EVENTS`)).toBe(0);
      expect(api.count(`$JS.API.STREAM.CREATE.KV_${stream}_LEASES`)).toBe(0);
      expect(api.starting(`$JS.API.CONSUMER.CREATE.${stream}.`)).toBe(0);
      expect(api.starting(`$JS.API.CONSUMER.DURABLE.CREATE.${stream}.`)).toBe(0);
      expect(api.count(`$JS.API.STREAM.INFO.${stream}`)).toBeGreaterThan(0);
    } finally {
      api.stop();
      await second.close();
      await first.close();
    }
  });

  describe('an existing stream with other fixed settings', () => {
    it('another partitions count fails accept and acquire with INBOX_CONFIG_INVALID naming both values; nothing is written', async () => {
      const stream = uniqueStream();
      const owner = new JetStreamInbox({ servers: server.url, stream }); // 16 partitions
      await owner.provision();
      const other = new JetStreamInbox({ servers: server.url, stream, partitions: 4 });
      try {
        const accepted = await rejectsCode(
          other.accept({ sessionKey: 'k', signal: text('x'), id: 'x' }),
          'INBOX_CONFIG_INVALID',
        );
        expect(accepted.message).toMatch(/partitions 16\b.*partitions 4\b/);
        const acquired = await rejectsCode(other.acquire('w', { leaseMs: 60_000, max: 1 }), 'INBOX_CONFIG_INVALID');
        expect(acquired.message).toMatch(/partitions 16\b.*partitions 4\b/);
        await rejectsCode(other.outcome('1-x', { timeoutMs: 10 }), 'INBOX_CONFIG_INVALID');
        await rejectsCode(collect(other.events({ sessionKey: 'k' })), 'INBOX_CONFIG_INVALID');
        await rejectsCode(other.provision(), 'INBOX_CONFIG_INVALID');
        expect((await jsm.streams.info(stream)).state.messages).toBe(0);
        expect(await owner.pending()).toEqual([]);
      } finally {
        await other.close();
        await owner.close();
      }
    });

    it('a failed first use is not kept: once the stream is gone, the next call creates it with this inbox’s settings', async () => {
      const stream = uniqueStream();
      const owner = new JetStreamInbox({ servers: server.url, stream, partitions: 8 });
      await owner.provision();
      await owner.close();
      const other = new JetStreamInbox({ servers: server.url, stream, partitions: 2 });
      try {
        await rejectsCode(other.accept({ sessionKey: 'k', signal: text('x'), id: 'x' }), 'INBOX_CONFIG_INVALID');
        await jsm.streams.delete(stream);
        expect((await other.accept({ sessionKey: 'k', signal: text('x'), id: 'x' })).seq).toBe('1');
        expect((await jsm.streams.info(stream)).config.description).toContain('partitions=2');
      } finally {
        await other.close();
      }
    });

    it('another leaseMs than the consumers’ ack_wait fails the first use with INBOX_CONFIG_INVALID', async () => {
      const stream = uniqueStream();
      const owner = new JetStreamInbox({ servers: server.url, stream, partitions: 2, leaseMs: 9000 });
      await owner.provision();
      const other = new JetStreamInbox({ servers: server.url, stream, partitions: 2, leaseMs: 5000 });
      try {
        const error = await rejectsCode(other.acquire('w', { leaseMs: 5000, max: 1 }), 'INBOX_CONFIG_INVALID');
        expect(error.message).toMatch(/leaseMs 9000\b.*leaseMs 5000\b/);
      } finally {
        await other.close();
        await owner.close();
      }
    });
  });
});

// Credentials that may not create streams nor consumers open an inbox whose objects exist.
describeNats('JetStreamInbox: first use under credentials that cannot create', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer({
      config: `accounts {
  APP {
    jetstream: enabled
    users: [
      { user: admin, password: admin }
      { user: app, password: app, permissions: { publish: { allow: [">"], deny: ["$JS.API.STREAM.CREATE.>", "$JS.API.CONSUMER.CREATE.>", "$JS.API.CONSUMER.DURABLE.CREATE.>"] } } }
    ]
  }
}
`,
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('accepts and reads outcomes over a stream provisioned by an admin', async () => {
    const stream = uniqueStream();
    const as = (user: string) => ({ servers: server.url, connectOptions: { user, pass: user }, stream, partitions: 2 });
    const admin = new JetStreamInbox(as('admin'));
    await admin.provision();
    const app = new JetStreamInbox(as('app'));
    try {
      const receipt = await app.accept({ sessionKey: 'k', signal: text('x'), id: 'x' });
      expect(receipt.seq).toBe('1');
      await admin.putOutcome(receipt.receiptId, { sessionKey: 'k', agentId: 'a', status: 'completed' }, 60_000);
      expect((await app.outcome(receipt.receiptId)).status).toBe('completed');
      // the same credentials over a stream nobody provisioned: refused by the server, nothing created
      const fresh = new JetStreamInbox({ ...as('app'), stream: uniqueStream() });
      const error = await rejectsCode(
        fresh.accept({ sessionKey: 'k', signal: text('x'), id: 'x' }),
        'INBOX_UNAVAILABLE',
      );
      expect(error.message).toMatch(/permission/i);
      await fresh.close();
    } finally {
      await app.close();
      await admin.close();
    }
  });
});
