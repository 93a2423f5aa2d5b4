// The replay report's text, without the DOM: the rows a turn's summary shows, which fields two
// runs disagree on, the field a divergence names, and a file that is not a report.
import { describe, expect, it } from 'vitest';

type Summary = Record<string, unknown>;
interface ReplayTextModule {
  SUMMARY_FIELDS: readonly (readonly [string, string])[];
  fieldText: (summary: Summary | undefined, field: string) => string;
  fieldOfPath: (path: unknown) => string;
  differingFields: (expected: Summary, actual: Summary | undefined) => Set<string>;
  reportProblem: (value: unknown) => string | undefined;
  countsText: (report: { sessions: { status: string }[] }) => string;
}

// The page's modules are plain browser JavaScript without type declarations: imported by path.
const path = '../ui/replay-text.js';
const { SUMMARY_FIELDS, fieldText, fieldOfPath, differingFields, reportProblem, countsText } = (await import(
  path
)) as ReplayTextModule;

const recorded: Summary = {
  status: 'completed',
  route: { tier: 'agent', name: '' },
  action: 'continue',
  handoffs: [{ from: 'triage', to: 'billing', signal: '[TO_BILLING]' }],
  toolCalls: [{ agentId: 'billing', name: 'refund', arguments: { amount: 40 } }],
  approvals: [{ tool: 'refund', decision: 'allow', rule: 'small-refunds' }],
  reply: 'Refunded 40.',
  fsmState: 'open',
};

describe('a turn summary as rows', () => {
  it('renders every field in words, lists one per line', () => {
    expect(SUMMARY_FIELDS.map(([f]) => fieldText(recorded, f))).toEqual([
      'completed',
      'agent: (unnamed)',
      'continue',
      'triage → billing ([TO_BILLING])',
      'billing: refund({"amount":40})',
      'refund: allow (rule small-refunds)',
      'Refunded 40.',
      'open',
    ]);
    const two = { handoffs: [recorded.handoffs, recorded.handoffs].flat() };
    expect(fieldText(two, 'handoffs').split('\n')).toHaveLength(2);
    expect(fieldText({ approvals: [{ tool: 't', decision: 'ask' }] }, 'approvals')).toBe('t: ask');
  });

  it('a missing field, or no summary at all, is empty', () => {
    expect(fieldText({ status: 'completed' }, 'reply')).toBe('');
    expect(fieldText(undefined, 'status')).toBe('');
    expect(fieldText({ reply: null }, 'reply')).toBe('');
  });
});

describe('where two runs part', () => {
  it('marks each field whose text differs, and none for a turn not replayed', () => {
    const today = { ...recorded, handoffs: [{ from: 'triage', to: 'billing', signal: 'fallback' }], reply: 'Hm.' };
    expect([...differingFields(recorded, today)]).toEqual(['handoffs', 'reply']);
    expect(differingFields(recorded, { ...recorded }).size).toBe(0);
    expect(differingFields(recorded, undefined).size).toBe(0);
  });

  it("names the summary field of a divergence's path", () => {
    expect(fieldOfPath('handoffs[1].to')).toBe('handoffs');
    expect(fieldOfPath('route')).toBe('route');
    expect(fieldOfPath('modelCalls[2].request.hash')).toBe('modelCalls');
    expect(fieldOfPath('')).toBe('');
    expect(fieldOfPath(undefined)).toBe('');
  });
});

describe('a file opened from disk', () => {
  const session = { sessionKey: 'k', status: 'same', turns: [] };
  it('is a report when it has sessions, each with a key, a known status and turns', () => {
    expect(reportProblem({ sessions: [session], same: 1 })).toBeUndefined();
    expect(reportProblem({ sessions: [] })).toBeUndefined();
  });

  it('says what is wrong otherwise', () => {
    expect(reportProblem(null)).toMatch(/expected a replay report/);
    expect(reportProblem([session])).toMatch(/expected a replay report/);
    expect(reportProblem({ cassettes: [] })).toMatch(/list of sessions/);
    expect(reportProblem({ sessions: [{ ...session, turns: undefined }] })).toMatch(/sessions\[0\] is not/);
    expect(reportProblem({ sessions: [session, { ...session, status: 'odd' }] })).toMatch(
      /sessions\[1\]\.status "odd" is not same, diverged, failed or partial/,
    );
  });

  it('counts its sessions by status', () => {
    const sessions = ['same', 'same', 'diverged', 'failed'].map((status) => ({ status }));
    expect(countsText({ sessions })).toBe('4 sessions · 2 same · 1 diverged · 1 failed · 0 partial');
  });
});
