import { describe, expect, it } from 'vitest';
import type { OutcomeJson } from '@signalyard/core';
import { InboxWakeups, waitForOutcome, type OutcomeLookup } from '@signalyard/core/internal';
import { rejectsCode } from '@signalyard/test-utils';

const done: OutcomeJson = { status: 'applied', sessionKey: 'agent:a:main', version: 1 } as unknown as OutcomeJson;

/** A lookup answering `answers` in turn (the last one from then on), counting its calls. */
function scripted(...answers: OutcomeLookup[]): {
  lookup: (id: string) => Promise<OutcomeLookup>;
  calls: () => number;
} {
  let n = 0;
  return {
    lookup: async () => answers[Math.min(n++, answers.length - 1)] as OutcomeLookup,
    calls: () => n,
  };
}

describe('waitForOutcome', () => {
  it('returns the outcome a lookup finds at once', async () => {
    const s = scripted({ outcome: done });
    await expect(waitForOutcome('r1', {}, s.lookup, new InboxWakeups())).resolves.toBe(done);
    expect(s.calls()).toBe(1);
  });

  it('returns the outcome stored between a lookup’s two reads (a settle seen as "gone" first)', async () => {
    // the outcome read found nothing, the entry read found it removed: the settle ran in between
    const s = scripted('gone', { outcome: done });
    await expect(waitForOutcome('r1', {}, s.lookup, new InboxWakeups())).resolves.toBe(done);
    expect(s.calls()).toBe(2);
  });

  it('rejects OUTCOME_EXPIRED naming the receipt when the second lookup finds nothing either', async () => {
    const s = scripted('gone');
    const error = await rejectsCode(waitForOutcome('r-9', {}, s.lookup, new InboxWakeups()), 'OUTCOME_EXPIRED');
    expect(error.message).toContain('"r-9"');
    expect(s.calls()).toBe(2);
  });

  it('waits while pending and looks again when woken', async () => {
    const wakeups = new InboxWakeups();
    const s = scripted('pending', { outcome: done });
    const waiting = waitForOutcome('r1', {}, s.lookup, wakeups);
    await new Promise((resolve) => setImmediate(resolve));
    expect(s.calls()).toBe(1);
    wakeups.wake('r1');
    await expect(waiting).resolves.toBe(done);
    expect(s.calls()).toBe(2);
  });

  it('rejects OUTCOME_TIMEOUT after timeoutMs while the entry waits', async () => {
    const s = scripted('pending');
    await rejectsCode(waitForOutcome('r1', { timeoutMs: 10 }, s.lookup, new InboxWakeups()), 'OUTCOME_TIMEOUT');
  });

  it('rejects ABORTED without a lookup when the signal is already aborted', async () => {
    const s = scripted({ outcome: done });
    await rejectsCode(
      waitForOutcome('r1', { abortSignal: AbortSignal.abort() }, s.lookup, new InboxWakeups()),
      'ABORTED',
    );
    expect(s.calls()).toBe(0);
  });
});
