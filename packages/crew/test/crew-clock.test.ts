import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, type Clock } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, type CrewResponse } from '@signalyard/crew';
import { thrown } from '@signalyard/test-utils';
import { collect, endOf, runError } from './crew-support.js';
import { POLICY, approvalCrew, calls, recordingTools } from './crew-support-approvals.js';

afterEach(() => {
  vi.useRealTimers();
});

const NEW_YEAR = Date.parse('2026-01-01T00:00:00Z');
/** A refund of 250: the policy asks, so the run pauses with one pending approval. */
const ASK = calls('one moment', ['c1', 'refund', { amount: 250 }]);

function executor(clock?: Clock): { executor: CrewExecutor; model: ReturnType<typeof scriptedModel> } {
  const { tools } = recordingTools();
  const model = scriptedModel(() => ASK);
  return { executor: new CrewExecutor({ crew: approvalCrew(POLICY), model, tools, ...(clock && { clock }) }), model };
}

const requestedAt = (response: CrewResponse): string | undefined => response.pendingApprovals?.[0]?.requestedAt;

describe('CrewExecutor clock', () => {
  it("stamps each approval's requestedAt with the executor's clock, read when the approval is requested", async () => {
    let now = NEW_YEAR;
    const { executor: crew } = executor({ now: () => now });
    expect(requestedAt(await crew.execute('refund me'))).toBe('2026-01-01T00:00:00.000Z');
    now += 90_000;
    expect(requestedAt(endOf(await collect(crew, 'refund me')))).toBe('2026-01-01T00:01:30.000Z');
  });

  it("a run's opts.clock wins over the executor's, for that run only", async () => {
    const { executor: crew } = executor({ now: () => NEW_YEAR });
    const late = { now: () => NEW_YEAR + 86_400_000 };
    expect(requestedAt(await crew.execute('refund me', { clock: late }))).toBe('2026-01-02T00:00:00.000Z');
    expect(requestedAt(endOf(await collect(crew, 'refund me', { clock: late })))).toBe('2026-01-02T00:00:00.000Z');
    expect(requestedAt(await crew.execute('refund me'))).toBe('2026-01-01T00:00:00.000Z');
  });

  it('defaults to the system clock (Date.now)', async () => {
    vi.useFakeTimers({ now: NEW_YEAR + 1234 });
    const { executor: crew } = executor();
    expect(requestedAt(await crew.execute('refund me'))).toBe('2026-01-01T00:00:01.234Z');
  });

  it('an executor clock that is not a Clock is a ConfigError naming the option and the value', () => {
    const { tools } = recordingTools();
    const model = scriptedModel(() => ASK);
    for (const clock of [42, { now: 5 }, null]) {
      const error = thrown(() => new CrewExecutor({ crew: approvalCrew(POLICY), model, tools, clock: clock as never }));
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as ConfigError).problems).toEqual([
        { path: 'clock', message: expect.stringMatching(/^expected a Clock \{ now\(\): number \}, got /) as string },
      ]);
    }
  });

  it('a run clock that is not a Clock fails the run with CREW_ARGUMENT_INVALID before any model call', async () => {
    const { executor: crew, model } = executor();
    const error = await runError(crew.execute('refund me', { clock: { now: 'soon' } as never }));
    expect(error.code).toBe('CREW_ARGUMENT_INVALID');
    expect(error.message).toBe('Invalid clock {"now":"soon"}: expected a Clock { now(): number }');
    expect(model.calls).toHaveLength(0);
  });
});
