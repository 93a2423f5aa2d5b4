// What a worker's look costs, counted: the messages an inbox's own connection sends the server
// (`stats().outMsgs`). The looking instances never take a key here, so they hold no partition
// and nothing runs in their background.
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { JetStreamInbox } from '@signalyard/nats';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';

let server: NatsServer | undefined;
const connections: NatsConnection[] = [];

/** An inbox over a connection of its own, and the count of messages that connection sent so far. */
async function counted(stream: string): Promise<{ inbox: JetStreamInbox; sent: () => number }> {
  const connection = await connect({ servers: (server as NatsServer).url });
  connections.push(connection);
  const inbox = new JetStreamInbox({ connection, stream, partitions: 4 });
  return { inbox, sent: () => connection.stats().outMsgs };
}

describeNats('JetStreamInbox: what a look costs', () => {
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    for (const connection of connections) await connection.close();
    await server?.stop();
  });

  it('a look that finds nothing is one request, whatever the partitions', async () => {
    const stream = `L_${randomBytes(6).toString('hex')}`;
    const { inbox, sent } = await counted(stream);
    await inbox.provision();
    await inbox.acquire('w', { leaseMs: 60_000, max: 10 }); // connects and reads the clock
    const before = sent();
    expect(await inbox.acquire('w', { leaseMs: 60_000, max: 10 })).toEqual([]);
    expect(sent() - before).toBe(1);
    await inbox.close();
  });

  it('looks back to back while another worker holds every waiting key ask only which keys wait', async () => {
    const stream = `L_${randomBytes(6).toString('hex')}`;
    const holder = await counted(stream);
    await holder.inbox.provision();
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    for (const [i, sessionKey] of keys.entries()) {
      await holder.inbox.accept({ sessionKey, signal: { kind: 'user_message', payload: 'x' }, id: `id-${i}` });
    }
    expect(await holder.inbox.acquire('holder', { leaseMs: 60_000, max: 100 })).toHaveLength(keys.length);
    const looker = await counted(stream);
    // The clocks stand still from here (the timers run): "within the second" holds however slow the machine.
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.now() });
    expect(await looker.inbox.acquire('looker', { leaseMs: 60_000, max: 100 })).toEqual([]);
    const before = looker.sent();
    expect(await looker.inbox.acquire('looker', { leaseMs: 60_000, max: 100 })).toEqual([]);
    // one stream info: the keys' first entries were read within the second, their leases seen live
    expect(looker.sent() - before).toBe(1);
    await looker.inbox.close();
    await holder.inbox.close();
  });
});

describeNats('JetStreamInbox: what a settle sends', () => {
  // A server of its own (the describe above stops its server when it ends).
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('settle of an entry its consumer pulled: no look at the stream; events, outcome and receipt before the ack', async () => {
    const stream = `S_${randomBytes(6).toString('hex')}`;
    const { inbox } = await counted(stream);
    await inbox.provision();
    const receipt = await inbox.accept({ sessionKey: 'k', signal: { kind: 'user_message', payload: 'x' }, id: 'i' });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    const read = [];
    for await (const entry of inbox.read(lease as never)) read.push(entry);
    const [entry] = read as [(typeof read)[number]];
    const attempt = await inbox.beginDelivery(entry);
    const wire = await connect({ servers: (server as NatsServer).url });
    connections.push(wire);
    const seen: string[] = [];
    const kinds: [RegExp, string][] = [
      [new RegExp(`^\\$JS\\.API\\.(STREAM\\.MSG\\.GET|DIRECT\\.GET)\\.${stream}$`), 'look'],
      [new RegExp(`^${stream}_EVENTS\\.`), 'event'],
      [new RegExp(`^\\$KV\\.${stream}_OUTCOMES\\.`), 'outcome'],
      [new RegExp(`^\\$KV\\.${stream}_RECEIPTS\\.`), 'receipt'],
      [new RegExp(`^\\$JS\\.ACK\\.${stream}\\.`), 'ack'],
    ];
    for (const subject of ['$JS.API.>', `${stream}_EVENTS.>`, '$KV.>', '$JS.ACK.>'])
      wire.subscribe(subject, {
        callback: (_, m) => {
          const kind = kinds.find(([pattern]) => pattern.test(m.subject));
          if (kind !== undefined) seen.push(kind[1]);
        },
      });
    await wire.flush();
    const outcome = { sessionKey: 'k', agentId: 'a', status: 'completed' as const };
    await inbox.settle(entry, outcome, 60_000, {
      attempt,
      events: [
        { type: 'text-delta', delta: 'a' },
        { type: 'outcome', outcome },
      ] as never,
    });
    await wire.flush();
    await expect.poll(() => seen.includes('ack'), { timeout: 10_000 }).toBe(true);
    // sent together (in any order), no look at the stream, and the ack after them
    expect(seen.slice(0, 4).sort()).toEqual(['event', 'event', 'outcome', 'receipt']);
    expect(seen.slice(4)).toEqual(['ack']);
    expect(await inbox.outcome(receipt.receiptId)).toEqual(outcome);
    expect(await inbox.pending()).toEqual([]);
    await inbox.close();
  });
});
