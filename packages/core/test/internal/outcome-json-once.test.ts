import { describe, expect, it } from 'vitest';
import { Action, outcomeToJson, type Outcome } from '@signalyard/core';
import { checkSettle, outcomeJsonOnce, turnEventText } from '@signalyard/core/internal';

const entry = {
  receiptId: 'r-1',
  sessionKey: 'agent:main:s',
  seq: '1',
  acceptedAt: '2026-01-01T00:00:00.000Z',
  signal: { kind: 'user_message', payload: 'hi' },
  attempts: 1,
};

function outcome(output: unknown = { reply: 'ok "quoted" \\ \u2028' }): Outcome {
  return {
    sessionKey: 'agent:main:s',
    agentId: 'main',
    action: Action.Continue,
    status: 'completed',
    output,
  } as Outcome;
}

describe('outcomeJsonOnce', () => {
  it('gives what outcomeToJson gives, the same object for the same outcome and limit, a new one for another limit', () => {
    const o = outcome();
    const json = outcomeJsonOnce(o, 1024);
    expect(json).toEqual(outcomeToJson(o, { maxOutcomeBytes: 1024 }));
    expect(outcomeJsonOnce(o, 1024)).toBe(json);
    const small = outcomeJsonOnce(o, 4);
    expect(small).toEqual(outcomeToJson(o, { maxOutcomeBytes: 4 }));
    expect(small.output).toMatchObject({ truncated: true });
    expect(outcomeJsonOnce(outcome(), 1024)).not.toBe(json);
  });

  it('throws what outcomeToJson throws for something that is not an outcome', () => {
    expect(() => outcomeJsonOnce(null as unknown as Outcome, 1024)).toThrow(/Invalid outcome/);
    expect(() => outcomeJsonOnce('x' as unknown as Outcome, 1024)).toThrow(/Invalid outcome/);
  });
});

describe('checkSettle event texts', () => {
  it("makes the outcome event's text from the stored outcome's text, as turnEventText would", () => {
    const o = outcome();
    const json = outcomeJsonOnce(o, 256 * 1024); // the default limit, as the Runner's settle uses it
    const events = [{ type: 'routed' as const }, { type: 'outcome' as const, outcome: o }];
    const checked = checkSettle(entry, json, 1000, { attempt: 1, events });
    expect(checked.eventTexts).toEqual(events.map((e) => turnEventText(e as never)));
    expect(JSON.parse(checked.eventTexts[1] as string)).toEqual({ type: 'outcome', outcome: json });
  });

  it('converts an outcome event whose outcome is not the one settled (or was made under another limit) on its own', () => {
    const settled = outcomeJsonOnce(outcome(), 8);
    const other = outcome({ reply: 'another' });
    const events = [{ type: 'outcome' as const, outcome: other }];
    const checked = checkSettle(entry, settled, 1000, { attempt: 1, events });
    expect(JSON.parse(checked.eventTexts[0] as string)).toEqual({ type: 'outcome', outcome: outcomeToJson(other) });
  });
});
