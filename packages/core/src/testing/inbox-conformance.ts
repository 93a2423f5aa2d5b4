import type { Inbox } from '../inbox.js';
import type { ConformanceHarness } from './conformance-support.js';
import { acceptCases, backPressureCases, concurrentAcceptCases, dedupeCases } from './inbox-cases-accept.js';
import { deliveryCases, leaseCases, leaseLifeCases, readCases } from './inbox-cases-leases.js';
import { closeCases, deadLetterCases, inputCases, notifyCases } from './inbox-cases-misc.js';
import { outcomeCases } from './inbox-cases-outcomes.js';
import { settleCases } from './inbox-cases-settle.js';
import { eventAttemptCases, eventCases, eventEndCases } from './inbox-cases-events.js';
import { eventResumeCases, publishManyCases } from './inbox-cases-streams.js';
import { sleep, underTest, type InboxFactory, type InboxTest } from './inbox-conformance-support.js';

/**
 * Registers the inbox conformance suite: what every `Inbox` transport must do, as inbox.md
 * gives it. `seq` per session key strictly increasing and in commit order under concurrent
 * accepts (a reader never sees a later `seq` before an earlier one; keys independent); `read`
 * in `seq` order after `afterSeq`; dedupe ids within the window; `INBOX_FULL` per session and
 * overall, with `retryAfterMs`; leases only on keys with entries, never one key to two workers
 * while live, expiry and takeover, `renew`, `release` (acquirable at once, not a delivery);
 * durable delivery counts; `ack`; outcomes put, awaited (across instances), timed out, aborted,
 * expired; stream logs by receipt from an offset and by session key, with `restarted`
 * attempts — live readers that disconnect and resume from their last offset get exactly the rest,
 * late events of a partitioned worker's older attempt are dropped, a marker that voids nothing is
 * skipped, events outlive the entry while its outcome is kept; notices; dead letters; `close`; and bad input refused with typed errors.
 *
 * Written with `node:assert`, so it runs under any test runner: pass its `describe` and `it`.
 * The factory gives each case fresh, isolated storage (see {@link InboxFactory}), optionally a
 * second inbox over the same storage and a way to move the inbox's clock; without one, cases
 * about expiry wait for real time (a few hundred milliseconds each).
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest';
 * import { inboxConformance } from '@signalyard/core/testing';
 *
 * inboxConformance('RedisInbox', async (limits) => {
 *   const prefix = `test-${crypto.randomUUID()}`;
 *   return {
 *     inbox: new RedisInbox({ url, prefix, ...limits }),
 *     another: () => new RedisInbox({ url, prefix, ...limits }),
 *     cleanup: () => dropPrefix(prefix),
 *   };
 * }, { describe, it });
 * ```
 */
export function inboxConformance(name: string, factory: InboxFactory, harness: ConformanceHarness): void {
  const { describe, it } = harness;

  const test: InboxTest = (title, fn, options = {}) => {
    it(title, async () => {
      const made = underTest(await factory(options));
      const opened: Inbox[] = [made.inbox];
      let extra: Inbox | undefined;
      try {
        await fn({
          inbox: made.inbox,
          hasAnother: made.another !== undefined,
          another: async () => {
            if (made.another === undefined) return made.inbox;
            if (extra === undefined) {
              extra = await made.another();
              opened.push(extra);
            }
            return extra;
          },
          elapse: async (ms) => {
            if (made.advanceTime !== undefined) await made.advanceTime(ms);
            else await sleep(ms);
          },
        });
      } finally {
        for (const inbox of opened) await inbox.close().catch(() => undefined);
        await made.cleanup?.();
      }
    });
  };

  describe(`${name}: inbox conformance`, () => {
    describe('accept and seq', () => {
      acceptCases(test);
      concurrentAcceptCases(test);
    });
    describe('dedupe ids', () => {
      dedupeCases(test);
    });
    describe('back-pressure', () => {
      backPressureCases(test);
    });
    describe('leases', () => {
      leaseCases(test);
      leaseLifeCases(test);
    });
    describe('read', () => {
      readCases(test);
    });
    describe('deliveries', () => {
      deliveryCases(test);
    });
    describe('outcomes', () => {
      outcomeCases(test);
    });
    describe('settle (optional)', () => {
      settleCases(test);
    });
    describe('stream events', () => {
      eventCases(test);
      eventAttemptCases(test);
      eventEndCases(test);
      eventResumeCases(test);
      publishManyCases(test);
    });
    describe('notices', () => {
      notifyCases(test);
    });
    describe('dead letters', () => {
      deadLetterCases(test);
    });
    describe('close', () => {
      closeCases(test);
    });
    describe('bad input', () => {
      inputCases(test);
    });
  });
}
