import { compareInboxSeq, isInboxSeq, readSessionCheckpoint } from '@signalyard/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const good = { v: 1, agentId: 'main', strategy: { type: 'direct' }, history: [], engine: null };

describe('the checkpoint inbox fields (inboxSeq, inboxPartial, inboxOutcomes)', () => {
  it('a checkpoint without them reads as one that settled nothing through an inbox', () => {
    const read = readSessionCheckpoint(good);
    expect(read.ok).toBe(true);
    if (read.ok) {
      expect(read.data.inboxSeq).toBeUndefined();
      expect(read.data.inboxPartial).toBeUndefined();
      expect(read.data.inboxOutcomes).toBeUndefined();
    }
  });

  it('keeps well-formed ones', () => {
    const outcome = { sessionKey: 'agent:main:main', agentId: 'main', status: 'completed' };
    const data = {
      ...good,
      inboxSeq: '41',
      inboxPartial: { seq: '42', receiptId: 'r-42' },
      inboxOutcomes: [{ receiptId: 'r-41', seq: '41', outcome }],
    };
    expect(readSessionCheckpoint(data)).toEqual({ ok: true, data });
  });

  it.each([
    [{ inboxSeq: 41 }, /inboxSeq 41 is not an inbox seq/],
    [{ inboxSeq: '041' }, /inboxSeq "041" is not an inbox seq/],
    [{ inboxSeq: '-1' }, /is not an inbox seq/],
    [{ inboxSeq: '' }, /is not an inbox seq/],
    [{ inboxPartial: { seq: '1' } }, /inboxPartial .* is not \{ seq/],
    [{ inboxPartial: { seq: 'x', receiptId: 'r' } }, /inboxPartial/],
    [{ inboxPartial: { seq: '1', receiptId: '' } }, /inboxPartial/],
    [{ inboxPartial: 'r' }, /inboxPartial/],
    [{ inboxOutcomes: {} }, /inboxOutcomes \{\} is not a list of \{ receiptId/],
    [{ inboxOutcomes: [{ receiptId: '', seq: '1', outcome: {} }] }, /inboxOutcomes/],
    [{ inboxOutcomes: [{ receiptId: 'r', seq: '01', outcome: {} }] }, /inboxOutcomes/],
    [{ inboxOutcomes: [{ receiptId: 'r', seq: '1', outcome: 'completed' }] }, /inboxOutcomes/],
    [{ inboxOutcomes: [null] }, /inboxOutcomes/],
  ])('refuses %j as a format problem', (fields, problem) => {
    const read = readSessionCheckpoint({ ...good, ...fields });
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toMatch(problem);
  });
});

describe('inbox seqs', () => {
  it('isInboxSeq accepts decimal strings without sign or leading zeros', () => {
    for (const seq of ['0', '1', '42', '18446744073709551615']) expect(isInboxSeq(seq)).toBe(true);
    for (const seq of ['', '01', '-1', '1.5', ' 1', '1e3', 1, null, '123456789012345678901']) {
      expect(isInboxSeq(seq)).toBe(false);
    }
  });

  it('compareInboxSeq orders by numeric value, exactly beyond 2^53', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), fc.bigInt({ min: 0n, max: 2n ** 64n }), (a, b) => {
        const expected = a < b ? -1 : a > b ? 1 : 0;
        expect(Math.sign(compareInboxSeq(a.toString(), b.toString()))).toBe(expected);
      }),
    );
    expect(compareInboxSeq('9', '10')).toBeLessThan(0);
  });
});
