// The checkpoint's inbox fields as settling saves write them: inboxSeq, inboxPartial and the
// recorded outcomes, for an entry settled in order and for a batch member settled ahead of merged
// members that wait for their turn (a kill between the two saves must lose neither).
import type { OutcomeJson } from '@signalyard/core';
import { describe, expect, it } from 'vitest';
import { carriedWithMark, entrySettled, settledThrough, type InboxMark } from '../src/inbox-fields.js';

const outcome = (status: OutcomeJson['status']): OutcomeJson => ({
  status,
  sessionKey: 'agent:main:main',
  agentId: 'main',
});
const recorded = (seq: string, status: OutcomeJson['status'] = 'completed') => ({
  receiptId: `r${seq}`,
  seq,
  outcome: outcome(status),
});
const settling = (seq: string, extra: Partial<InboxMark> = {}): InboxMark => ({
  seq,
  receiptId: `r${seq}`,
  partial: false,
  outcomes: [recorded(seq)],
  ...extra,
});

describe('carriedWithMark', () => {
  it('a settling save advances inboxSeq, never lowers it, and clears inboxPartial', () => {
    const after = carriedWithMark({ inboxSeq: '4', inboxPartial: { seq: '5', receiptId: 'r5' } }, settling('5'));
    expect(after).toEqual({ inboxSeq: '5', inboxOutcomes: [recorded('5')] });
    expect(carriedWithMark({ inboxSeq: '9' }, settling('5')).inboxSeq).toBe('9');
    // Numeric order, not text order: 10 comes after 9.
    expect(carriedWithMark({ inboxSeq: '9' }, settling('10')).inboxSeq).toBe('10');
  });

  it('outcomes known stored are not carried on; those not known stored are, and those settled ahead always are', () => {
    const carried = { inboxSeq: '3', inboxOutcomes: [recorded('1'), recorded('2'), recorded('3')] };
    // r1 and r3 stored (their settle resolved here); r2 not known stored: kept beside the new one.
    const after = carriedWithMark(carried, settling('4'), new Set(['r1', 'r3']));
    expect(after).toEqual({ inboxSeq: '4', inboxOutcomes: [recorded('2'), recorded('4')] });
    // Without the set (or an empty one), as before: all kept.
    expect(carriedWithMark(carried, settling('4')).inboxOutcomes).toHaveLength(4);
    // The outcome of an entry settled ahead of inboxSeq is what marks it settled: kept even when stored.
    const ahead = carriedWithMark({ inboxSeq: '1' }, settling('4', { ahead: { settledSeq: '1' } }));
    const next = carriedWithMark(ahead, settling('5', { ahead: { settledSeq: '1' } }), new Set(['r4']));
    expect((next.inboxOutcomes as { seq: string }[]).map((o) => o.seq)).toEqual(['4', '5']);
    expect(entrySettled(next, { seq: '4', receiptId: 'r4' })).toBe(true);
  });

  it('a commit records inboxPartial and leaves inboxSeq', () => {
    const after = carriedWithMark({ inboxSeq: '2' }, { seq: '3', receiptId: 'r3', partial: true });
    expect(after).toEqual({ inboxSeq: '2', inboxPartial: { seq: '3', receiptId: 'r3' } });
  });

  it('a member settled ahead: inboxSeq only up to the waiting members, its own entry as inboxPartial, its outcome recorded', () => {
    const after = carriedWithMark({ inboxSeq: '1' }, settling('4', { ahead: { settledSeq: '2' } }));
    expect(after).toEqual({
      inboxSeq: '2',
      inboxPartial: { seq: '4', receiptId: 'r4' },
      inboxOutcomes: [recorded('4')],
    });
    // Nothing before the first waiting member: inboxSeq stays as it is, or absent.
    expect(carriedWithMark({}, settling('4', { ahead: { settledSeq: undefined } }))).toEqual({
      inboxPartial: { seq: '4', receiptId: 'r4' },
      inboxOutcomes: [recorded('4')],
    });
  });

  it('keeps the outcome of every entry settled ahead of inboxSeq, beyond the usual eight', () => {
    let carried: Readonly<Record<string, unknown>> = { inboxSeq: '1' };
    // Entry 2 waits for the merged turn; entries 3..14 are applied on their own, each saved ahead.
    for (let seq = 3; seq <= 14; seq++)
      carried = carriedWithMark(carried, settling(String(seq), { ahead: { settledSeq: '1' } }));
    const kept = (carried.inboxOutcomes as { seq: string }[]).map((o) => o.seq);
    expect(kept).toEqual(['3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14']);
    // The merged turn's save settles them all: back to the usual eight, newest kept.
    carried = carriedWithMark(carried, settling('15'));
    expect(carried.inboxSeq).toBe('15');
    expect(carried.inboxPartial).toBeUndefined();
    expect((carried.inboxOutcomes as { seq: string }[]).map((o) => o.seq)).toEqual([
      '8',
      '9',
      '10',
      '11',
      '12',
      '13',
      '14',
      '15',
    ]);
  });

  it('save after save keeps what a save from the loaded checkpoint keeps: the latest eight, at most 64 KiB of older ones', () => {
    // Outcomes of 20 KiB each: the byte limit keeps fewer than eight older ones.
    const big = (seq: string) => ({
      ...recorded(seq),
      outcome: { ...outcome('completed'), output: 'x'.repeat(20_000) },
    });
    for (const make of [recorded, big]) {
      let chained: Readonly<Record<string, unknown>> = {};
      for (let seq = 1; seq <= 20; seq++) {
        const mark = { ...settling(String(seq)), outcomes: [make(String(seq))] };
        const fromLoaded = carriedWithMark(JSON.parse(JSON.stringify(chained)) as Record<string, unknown>, mark);
        chained = carriedWithMark(chained, mark);
        expect(chained).toEqual(fromLoaded);
      }
      const kept = (chained.inboxOutcomes as { seq: string }[]).map((o) => o.seq);
      expect(kept).toEqual(make === big ? ['17', '18', '19', '20'] : ['13', '14', '15', '16', '17', '18', '19', '20']);
    }
  });
});

describe('entrySettled', () => {
  const ahead = carriedWithMark({ inboxSeq: '1' }, settling('4', { ahead: { settledSeq: '2' } }));

  it('an entry at or below inboxSeq is settled', () => {
    expect(entrySettled(ahead, { seq: '1', receiptId: 'r1' })).toBe(true);
    expect(entrySettled(ahead, { seq: '2', receiptId: 'r2' })).toBe(true);
    expect(settledThrough(ahead, '2')).toBe(true);
  });

  it('a member settled ahead is settled; a waiting one below inboxPartial without an outcome is not', () => {
    expect(entrySettled(ahead, { seq: '4', receiptId: 'r4' })).toBe(true);
    expect(entrySettled(ahead, { seq: '3', receiptId: 'r3' })).toBe(false);
    expect(settledThrough(ahead, '4')).toBe(false);
  });

  it('an entry above inboxPartial is not settled, even with an outcome recorded under its receipt', () => {
    const odd = { ...ahead, inboxOutcomes: [recorded('4'), recorded('7')] };
    expect(entrySettled(odd, { seq: '7', receiptId: 'r7' })).toBe(false);
  });

  it('a commit alone settles nothing: its entry is re-applied from the committed state', () => {
    const committed = carriedWithMark({ inboxSeq: '2' }, { seq: '3', receiptId: 'r3', partial: true });
    expect(entrySettled(committed, { seq: '3', receiptId: 'r3' })).toBe(false);
  });

  it('malformed or absent fields settle nothing', () => {
    expect(entrySettled({}, { seq: '1', receiptId: 'r1' })).toBe(false);
    expect(entrySettled({ inboxSeq: 7, inboxPartial: 'x' }, { seq: '1', receiptId: 'r1' })).toBe(false);
  });
});
