// A worker keeps the lease of a session that ran out of entries for a while (idleLeaseMs: its
// next signal finds the session loaded), but an idle lease never keeps a session with entries
// out: a worker whose maxSessions slots are all taken gives idle leases up for keys with entries
// at once. Here the idle wait is a minute (pollMs 60 s), so a worker that waited for it would
// leave the second session's signal unsettled for the whole test.
import { MemoryInbox, signal, type InboxLease } from '@signalyard/core';
import { createRunner, type Runner } from 'signalyard';
import { afterEach, expect, it } from 'vitest';

class ReleaseCountingInbox extends MemoryInbox {
  readonly released: string[] = [];
  override release(lease: InboxLease): Promise<void> {
    this.released.push(lease.key);
    return super.release(lease);
  }
}

const runners: Runner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

function idleRunner(inbox: MemoryInbox, maxSessions: number): Runner {
  const runner = createRunner({
    agents: [
      {
        id: 'main',
        engine: (ctx) => Promise.resolve({ messages: [{ role: 'assistant', content: `ok ${ctx.sessionKey}` }] }),
      },
    ],
    inbox,
    worker: { pollMs: 60_000, leaseMs: 3_600_000, maxSessions },
  });
  runners.push(runner);
  return runner;
}

const hi = signal('user_message', { channel: 'cli', text: 'hi' });

it('gives an idle lease up at once for a key with entries when every slot is taken', async () => {
  const inbox = new ReleaseCountingInbox();
  const runner = idleRunner(inbox, 1);
  await runner.start();
  const a = await runner.accept('agent:main:a', hi);
  expect(await runner.outcome(a.receiptId, { timeoutMs: 10_000 })).toMatchObject({ status: 'completed' });
  expect(inbox.released).toEqual([]); // a is idle and kept
  const b = await runner.accept('agent:main:b', hi);
  expect(await runner.outcome(b.receiptId, { timeoutMs: 10_000 })).toMatchObject({ status: 'completed' });
  expect(inbox.released).toEqual(['agent:main:a']);
});

it('keeps an idle lease while a slot is free, and settles the session’s next signal under it', async () => {
  const inbox = new ReleaseCountingInbox();
  const runner = idleRunner(inbox, 2);
  await runner.start();
  const first = await runner.accept('agent:main:a', hi);
  await runner.outcome(first.receiptId, { timeoutMs: 10_000 });
  const other = await runner.accept('agent:main:b', hi);
  await runner.outcome(other.receiptId, { timeoutMs: 10_000 });
  const again = await runner.accept('agent:main:a', hi);
  expect(await runner.outcome(again.receiptId, { timeoutMs: 10_000 })).toMatchObject({ status: 'completed' });
  expect(inbox.released).toEqual([]);
});
