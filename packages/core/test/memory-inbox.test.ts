import { ConfigError, MemoryInbox, type InboxNotice } from '@signalyard/core';
import { expectCode, rejectsCode, thrown } from '@signalyard/test-utils';
import { afterEach, describe, expect, it, vi } from 'vitest';

const text = (payload: string) => ({ kind: 'user_message', payload }) as const;

describe('MemoryInbox options', () => {
  it('refuses bad options with one ConfigError listing every problem', () => {
    const error = thrown(
      () =>
        new MemoryInbox({
          maxPendingPerSession: 0,
          maxPending: 1.5,
          dedupeWindowMs: -1,
          retryAfterMs: 'soon' as unknown as number,
          clock: {} as never,
          extra: true,
        } as never),
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual([
      'maxPendingPerSession',
      'maxPending',
      'dedupeWindowMs',
      'retryAfterMs',
      'clock',
      'extra',
    ]);
    expectCode(
      thrown(() => new MemoryInbox('x' as never)),
      'CONFIG_INVALID',
    );
  });

  it('takes its time from the clock: acceptedAt, lease expiry', async () => {
    let now = Date.parse('2030-05-06T07:08:09.010Z');
    const inbox = new MemoryInbox({ clock: { now: () => now } });
    const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    expect(receipt.acceptedAt).toBe('2030-05-06T07:08:09.010Z');
    const [lease] = await inbox.acquire('w', { leaseMs: 1000, max: 1 });
    expect(lease?.expiresAt).toBe('2030-05-06T07:08:10.010Z');
    now += 999;
    expect(await inbox.acquire('w2', { leaseMs: 1000, max: 1 })).toEqual([]);
    now += 1;
    expect((await inbox.acquire('w2', { leaseMs: 1000, max: 1 }))[0]?.workerId).toBe('w2');
  });

  it('retryAfterMs is the one configured', async () => {
    const inbox = new MemoryInbox({ maxPendingPerSession: 1, retryAfterMs: 2500 });
    await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    const error = await rejectsCode(inbox.accept({ sessionKey: 's', signal: text('y'), id: 'b' }), 'INBOX_FULL');
    expect((error as unknown as { retryAfterMs: number }).retryAfterMs).toBe(2500);
  });
});

describe('MemoryInbox', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a key's seq keeps growing after all its entries were settled", async () => {
    const inbox = new MemoryInbox();
    const first = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    const [lease] = await inbox.acquire('w', { leaseMs: 1000, max: 1 });
    for await (const entry of inbox.read(lease!)) await inbox.ack(entry);
    const second = await inbox.accept({ sessionKey: 's', signal: text('y'), id: 'b' });
    expect(Number(second.seq)).toBe(Number(first.seq) + 1);
  });

  it('lists pending entries per session and live leases for operators', async () => {
    let now = 0;
    const inbox = new MemoryInbox({ clock: { now: () => now } });
    await inbox.accept({ sessionKey: 'b', signal: text('b0'), id: '1' });
    await inbox.accept({ sessionKey: 'a', signal: text('a0'), id: '2' });
    await inbox.accept({ sessionKey: 'a', signal: text('a1'), id: '3', agentId: 'desk' });
    expect((await inbox.pending()).map((e) => [e.sessionKey, e.signal.payload])).toEqual([
      ['a', 'a0'],
      ['a', 'a1'],
      ['b', 'b0'],
    ]);
    expect((await inbox.pending({ sessionKey: 'a', limit: 1 })).map((e) => e.signal.payload)).toEqual(['a0']);
    expect(await inbox.pending({ sessionKey: 'nobody' })).toEqual([]);
    const [lease] = await inbox.acquire('worker-7', { leaseMs: 500, max: 1 });
    expect(await inbox.leases()).toEqual([{ key: lease?.key, workerId: 'worker-7', expiresAt: lease?.expiresAt }]);
    now += 500;
    expect(await inbox.leases()).toEqual([]);
    await rejectsCode(inbox.pending({ limit: 0 }), 'INBOX_INPUT_INVALID');
    await rejectsCode(inbox.pending({ sessionKey: '' }), 'INBOX_INPUT_INVALID');
  });

  it('notices reach the listeners of this instance, synchronously with the call, in order', async () => {
    const inbox = new MemoryInbox();
    const other = new MemoryInbox();
    const heard: [string, InboxNotice][] = [];
    const heardElsewhere: unknown[] = [];
    inbox.onNotify((key, what) => heard.push([key, what]));
    other.onNotify((key) => heardElsewhere.push(key));
    await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    await inbox.notify('s', 'stop');
    expect(heard).toEqual([
      ['s', 'entry'],
      ['s', 'stop'],
    ]);
    expect(heardElsewhere).toEqual([]);
    await inbox.close();
    expect(inbox.onNotify(() => undefined)).toBeTypeOf('function');
  });

  it('outcome() timeoutMs runs on timers: fake timers drive it', async () => {
    vi.useFakeTimers();
    const inbox = new MemoryInbox();
    const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    const waiting = rejectsCode(inbox.outcome(receipt.receiptId, { timeoutMs: 60_000 }), 'OUTCOME_TIMEOUT');
    await vi.advanceTimersByTimeAsync(60_000);
    await waiting;
  });

  it('expired dedupe ids, outcomes and their logs are dropped from memory', async () => {
    let now = 0;
    const inbox = new MemoryInbox({ dedupeWindowMs: 100, clock: { now: () => now } });
    const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    const [lease] = await inbox.acquire('w', { leaseMs: 1000, max: 1 });
    for await (const entry of inbox.read(lease!)) {
      await inbox.beginDelivery(entry);
      await inbox.publish(entry.receiptId, 1, { type: 'text_delta', agentId: 'a', delta: 'hi' });
      await inbox.putOutcome(entry.receiptId, { sessionKey: 's', agentId: 'a', status: 'completed' }, 100);
      await inbox.ack(entry);
    }
    now += 5000;
    // a later accept sweeps: the id is free again, the outcome and its log are gone
    const again = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    expect(again.receiptId).not.toBe(receipt.receiptId);
    await rejectsCode(inbox.outcome(receipt.receiptId), 'OUTCOME_EXPIRED');
    const events = [];
    for await (const event of inbox.events({ receiptId: receipt.receiptId })) events.push(event);
    expect(events).toEqual([]);
  });
});
