// What a partition's holder keeps pulled when another process settles entries of that partition
// (a key of it leased elsewhere acknowledges by deleting the stream message): watched on the wire,
// as the `working()` messages the holder sends to the entries' ack subjects.
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { InboxEntry, InboxLease } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { afterAll, beforeAll, expect, it } from 'vitest';

const text = (payload: string) => ({ kind: 'user_message' as const, payload });

let server: NatsServer;
beforeAll(async () => {
  server = await startNatsServer();
});
afterAll(async () => {
  await server.stop();
});

/** The stream sequence an ack subject names (`$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.…`, or the form with a domain and an account hash). */
function streamSeqOf(subject: string): number {
  const tokens = subject.split('.');
  return Number(tokens.length === 9 ? tokens[5] : tokens[7]);
}

/** Records, in order, the stream sequences whose entries were sent `working()` (`+WPI`) on `stream`'s consumers. */
async function watchWorking(nc: NatsConnection, stream: string): Promise<number[]> {
  const seen: number[] = [];
  const decoder = new TextDecoder();
  nc.subscribe(`$JS.ACK.${stream}.>`, {
    callback: (_, m) => {
      if (decoder.decode(m.data) === '+WPI') seen.push(streamSeqOf(m.subject));
    },
  });
  await nc.flush();
  return seen;
}

async function settle(inbox: JetStreamInbox, lease: InboxLease): Promise<InboxEntry> {
  const entries: InboxEntry[] = [];
  for await (const entry of inbox.read(lease)) entries.push(entry);
  const [entry] = entries as [InboxEntry];
  await inbox.beginDelivery(entry);
  await inbox.putOutcome(entry.receiptId, { sessionKey: entry.sessionKey, agentId: 'x', status: 'completed' }, 60_000);
  await inbox.ack(entry);
  return entry;
}

describeNats('JetStreamInbox: a partition holder and entries settled by another process', () => {
  it('stops keeping alive (working()) an entry it pulled that another process settled, and keeps the ones still stored', async () => {
    const stream = `H_${randomBytes(6).toString('hex')}`;
    const options = { servers: server.url, stream, partitions: 1, leaseMs: 1500 };
    const a = new JetStreamInbox(options);
    const b = new JetStreamInbox(options);
    const nc = await connect({ servers: server.url });
    try {
      await a.provision();
      const seen = await watchWorking(nc, stream);
      const x = await a.accept({ sessionKey: 'x', signal: text('x'), id: 'x' });
      const y = await a.accept({ sessionKey: 'y', signal: text('y'), id: 'y' });
      const z = await a.accept({ sessionKey: 'z', signal: text('z'), id: 'z' }); // leased by no one for now
      // a takes x (the oldest waiting), holds the partition and pulls both entries
      const [leaseX] = await a.acquire('a', { leaseMs: 60_000, max: 1 });
      expect(leaseX?.key).toBe('x');
      await expect.poll(() => seen.includes(Number(y.seq)), { timeout: 30_000 }).toBe(true);
      // b takes y, the partition's consumer is a's: b settles y by deleting it from the stream
      const [leaseY] = await b.acquire('b', { leaseMs: 60_000, max: 1 });
      expect(leaseY?.key).toBe('y');
      const settled = await settle(b, leaseY as InboxLease);
      expect(settled.receiptId).toBe(y.receiptId);
      expect((await a.pending()).map((e) => e.receiptId)).toEqual([x.receiptId, z.receiptId]);
      // a still holds x and keeps its holder busy; y must stop being kept alive. A hang guard,
      // not a speed check: three rounds of working() for x with none for y in between.
      const roundsForXAfterLastY = (): number => {
        const last = seen.lastIndexOf(Number(y.seq));
        return seen.slice(last + 1).filter((seq) => seq === Number(x.seq)).length;
      };
      await expect
        .poll(
          async () => {
            expect(await a.renew(leaseX as InboxLease)).toBe(true);
            return roundsForXAfterLastY();
          },
          { timeout: 30_000, interval: 300 },
        )
        .toBeGreaterThanOrEqual(3);
      // z, looked up and still stored, is kept alive all along
      expect(seen.slice(seen.lastIndexOf(Number(y.seq)) + 1)).toContain(Number(z.seq));
      // x and z are still pulled and the partition held: a settles them through its consumer
      expect((await settle(a, leaseX as InboxLease)).receiptId).toBe(x.receiptId);
      const [leaseZ] = await a.acquire('a', { leaseMs: 60_000, max: 1 });
      expect(leaseZ?.key).toBe('z');
      expect((await settle(a, leaseZ as InboxLease)).receiptId).toBe(z.receiptId);
      expect(await a.renew(leaseZ as InboxLease)).toBe(true);
      expect(await a.pending()).toEqual([]);
    } finally {
      await nc.close();
      await a.close();
      await b.close();
    }
  }, 60_000);
});
