import { describe, expect, it } from 'vitest';
import { pendingApprovalCount, readSessionCheckpoint, sessionVersionOf } from '@signalyard/core/internal';

const good = {
  v: 1,
  agentId: 'main',
  strategy: { type: 'direct' },
  history: [{ role: 'user', content: 'hi' }],
  engine: 3,
};

describe('readSessionCheckpoint', () => {
  it('reads a v1 checkpoint and keeps unknown top-level fields', () => {
    const read = readSessionCheckpoint({ ...good, futureField: [1] });
    expect(read).toEqual({ ok: true, data: { ...good, futureField: [1] } });
  });

  it.each([
    [null, /expected an object/],
    [[], /expected an object/],
    [{ ...good, v: 2 }, /unknown checkpoint format version v=2; this release reads v=1/],
    [{ ...good, agentId: '' }, /agentId "" is not an agent id/],
    [{ ...good, strategy: { state: 'x' } }, /is not a strategy snapshot/],
    [{ ...good, history: 'hi' }, /is not a list of messages/],
  ])('names what is wrong with %j, as a format problem', (data, problem) => {
    const read = readSessionCheckpoint(data);
    expect(read.ok).toBe(false);
    if (!read.ok) {
      expect(read.problem).toMatch(problem);
      expect(read.badEntry).toBe(false);
    }
  });

  it('reports a history entry that is not a chat message by its index', () => {
    const read = readSessionCheckpoint({ ...good, history: [{ role: 'user', content: 'ok' }, null] });
    expect(read).toMatchObject({ ok: false, badEntry: true, problem: expect.stringContaining('history[1] is null') });
  });
});

describe('sessionVersionOf and pendingApprovalCount', () => {
  it('summarises a kept version', () => {
    const read = readSessionCheckpoint({ ...good, pendingApprovals: [{ id: 'a' }], cause: { at: 't', rewoundTo: 1 } });
    if (!read.ok) throw new Error(read.problem);
    expect(pendingApprovalCount(read.data)).toBe(1);
    expect(sessionVersionOf({ version: 4, data: read.data, updatedAt: 'u' }, read.data)).toEqual({
      version: 4,
      updatedAt: 'u',
      agentId: 'main',
      cause: { at: 't', rewoundTo: 1 },
      strategy: { type: 'direct' },
      historyLength: 1,
      pendingApprovals: 1,
    });
    const plain = readSessionCheckpoint(good);
    if (plain.ok) expect(pendingApprovalCount(plain.data)).toBe(0);
  });
});
