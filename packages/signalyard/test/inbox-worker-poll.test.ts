// A worker's poll (every pollMs) reads a leased session's entries only when no read of it began
// since the previous tick: a key read on notices costs no poll reads, and a quiet one is looked at
// every other tick (a lost notice delays an entry by at most 2 × pollMs). The poll's interval is
// a fake timer, so ticks are counted, not timed.
import { MemoryInbox, signal, type InboxEntry, type InboxLease } from '@signalyard/core';
import { deferred } from '@signalyard/test-utils';
import { createRunner, type Runner } from 'signalyard';
import { afterEach, expect, it, vi } from 'vitest';

class CountingInbox extends MemoryInbox {
  readonly reads: string[] = [];
  override read(lease: InboxLease, afterSeq?: string): AsyncIterable<InboxEntry> {
    this.reads.push(lease.key);
    return super.read(lease, afterSeq);
  }
}

const runners: Runner[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const r of runners.splice(0)) await r.close();
});

/** Lets what the last tick started run to its end (promises and real timers of the memory inbox). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

it('reads a held key on every other poll tick while nothing else reads it, and not at all on a tick after a read', async () => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  const inbox = new CountingInbox();
  const entered = deferred<undefined>();
  const release = deferred<undefined>();
  const runner = createRunner({
    agents: [
      {
        id: 'main',
        engine: async () => {
          entered.resolve(undefined);
          await release.promise;
          return { messages: [{ role: 'assistant', content: 'ok' }] };
        },
      },
    ],
    inbox,
    worker: { pollMs: 1000, leaseMs: 3_600_000 },
  });
  runners.push(runner);
  await runner.start();
  const key = 'agent:main:polled';
  await runner.accept(key, signal('user_message', { channel: 'cli', text: 'hi' }));
  await entered.promise; // leased, read, its turn running: nothing more to read
  await settle();
  const reads = (): number => inbox.reads.filter((k) => k === key).length;
  const first = reads();
  expect(first).toBeGreaterThan(0);
  await vi.advanceTimersByTimeAsync(1000); // a read began since the last tick: left alone
  await settle();
  expect(reads()).toBe(first);
  await vi.advanceTimersByTimeAsync(1000); // none since: looked at
  await settle();
  expect(reads()).toBe(first + 1);
  await vi.advanceTimersByTimeAsync(1000);
  await settle();
  expect(reads()).toBe(first + 1);
  await vi.advanceTimersByTimeAsync(1000);
  await settle();
  expect(reads()).toBe(first + 2);
  release.resolve(undefined);
});
