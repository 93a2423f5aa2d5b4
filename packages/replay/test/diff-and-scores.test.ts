import { SignalyardError, type RunSummary } from '@signalyard/core';
import { describe, expect, it } from 'vitest';
import {
  ReplayError,
  canonicalJson,
  diffRuns,
  diffSummaries,
  noMarkersVisible,
  replyIncludes,
  requestHash,
  sameHandoffs,
  sameRoute,
  toolCalledOnce,
  type Cassette,
  type ScorerRun,
} from '../src/index.js';

const base: RunSummary = {
  status: 'completed',
  route: { tier: 'agent', name: 'chat' },
  action: 'continue',
  handoffs: [{ from: 'triage', to: 'billing', signal: '[TO_BILLING]' }],
  toolCalls: [{ agentId: 'billing', name: 'refund', arguments: { amount: 40 } }],
  approvals: [{ tool: 'refund', decision: 'allow', rule: 'small' }],
  reply: 'Refunded.',
  fsmState: 'open',
};
const with_ = (patch: Partial<RunSummary>): RunSummary => ({ ...base, ...patch });

describe('diffSummaries / diffRuns', () => {
  it('names the first field that differs, causes before consequences', () => {
    expect(diffSummaries(base, base)).toBeUndefined();
    expect(diffSummaries(base, with_({ route: { tier: 'plugin', name: 'gate' } }))).toEqual({
      path: 'route',
      expected: 'agent:chat',
      actual: 'plugin:gate',
    });
    expect(diffSummaries(base, with_({ route: undefined }))?.path).toBe('route');
    expect(diffSummaries(base, with_({ action: 'reject:busy', status: 'rejected' }))?.path).toBe('action');
    expect(
      diffSummaries(base, with_({ handoffs: [{ from: 'triage', to: 'refunds', signal: '[TO_BILLING]' }] })),
    ).toEqual({
      path: 'handoffs[0].to',
      expected: 'billing',
      actual: 'refunds',
    });
    expect(diffSummaries(base, with_({ handoffs: [] }))).toEqual({
      path: 'handoffs[0]',
      expected: base.handoffs[0],
      actual: undefined,
    });
    expect(diffSummaries(base, with_({ toolCalls: [{ name: 'refund', arguments: { amount: 41 } }] }))?.path).toBe(
      'toolCalls[0].arguments',
    );
    expect(
      diffSummaries(base, with_({ approvals: [{ tool: 'refund', decision: 'ask' }], status: 'paused' }))?.path,
    ).toBe('approvals[0].decision');
    expect(diffSummaries(base, with_({ status: 'failed' }))?.path).toBe('status');
    expect(diffSummaries(base, with_({ reply: 'Sorry.' }))).toEqual({
      path: 'reply',
      expected: 'Refunded.',
      actual: 'Sorry.',
    });
    expect(diffSummaries(base, with_({ fsmState: 'closed' }))?.path).toBe('fsmState');
  });

  it('shown, not compared: a tool call’s agent and an approval’s rule; arguments compared as canonical JSON', () => {
    expect(
      diffSummaries(base, with_({ toolCalls: [{ agentId: 'other', name: 'refund', arguments: { amount: 40 } }] })),
    ).toBeUndefined();
    expect(diffSummaries(base, with_({ approvals: [{ tool: 'refund', decision: 'allow' }] }))).toBeUndefined();
    const a = with_({ toolCalls: [{ name: 'x', arguments: { a: 1, b: 2 } }] });
    const b = with_({ toolCalls: [{ name: 'x', arguments: { b: 2, a: 1 } }] });
    expect(diffSummaries(a, b)).toBeUndefined();
  });

  it('diffRuns: the first turn and field, as a path; lists, cassettes and replayed sessions alike', () => {
    expect(diffRuns([base, base], [base, base])).toEqual({ same: true });
    const d = diffRuns(
      [base, with_({ handoffs: [...base.handoffs, { from: 'billing', to: 'billing2', signal: 'x' }] })],
      [base, with_({ handoffs: [...base.handoffs, { from: 'billing', to: 'refunds', signal: 'x' }] })],
    );
    expect(d).toEqual({
      same: false,
      divergence: {
        turn: 2,
        kind: 'summary',
        path: 'handoffs[1].to',
        expected: 'billing2',
        actual: 'refunds',
        text: 'turn 2 › handoffs[1].to: billing2 → refunds',
      },
    });
    const longer = diffRuns([base], [base, base]);
    expect(!longer.same && longer.divergence.text).toBe('turn 2 › turn: (none) → a turn');
    const cassette = { turns: [{ expected: base }] };
    const replayed = { turns: [{ expected: base, actual: with_({ reply: 'x' }) }] };
    const r = diffRuns(cassette, replayed);
    expect(!r.same && r.divergence.path).toBe('reply');
    expect(() => diffRuns('nope' as never, [])).toThrow(ReplayError);
    try {
      diffRuns([], 42 as never);
    } catch (error) {
      expect(ReplayError.isInstance(error) && error.code).toBe('REPLAY_INPUT_INVALID');
    }
  });
});

describe('canonical JSON and request hashes', () => {
  it('sorts keys, drops undefined members, and hashes without volatile ids', () => {
    expect(canonicalJson({ b: 1, a: [{ d: undefined, c: 2 }] })).toBe('{"a":[{"c":2}],"b":1}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(new Date(0))).toBe('"1970-01-01T00:00:00.000Z"');
    const req = (id: string, content = 'hi') => ({
      agentId: 'billing',
      messages: [
        { role: 'user' as const, content },
        { role: 'assistant' as const, content: '', toolCalls: [{ id, name: 'refund', arguments: { amount: 1 } }] },
        { role: 'tool' as const, content: 'ok', toolCallId: id },
      ],
    });
    expect(requestHash(req('a1'))).toBe(requestHash(req('zz')));
    expect(requestHash(req('a1'))).not.toBe(requestHash(req('a1', 'hello')));
    expect(requestHash(req('a1'))).toMatch(/^[0-9a-f]{64}$/);
  });
});

const run = (turns: [Partial<RunSummary>, Partial<RunSummary>][]): ScorerRun => ({
  cassette: { sessionKey: 's' } as Cassette,
  turns: turns.map(([e, a]) => ({ expected: with_(e), actual: with_(a) })),
});

describe('scorers', () => {
  it('sameRoute and sameHandoffs score the share of turns that kept them', async () => {
    expect(
      await sameRoute()(
        run([
          [{}, {}],
          [{}, { action: 'reject:x' }],
        ]),
      ),
    ).toEqual({ name: 'sameRoute', score: 0.5, reason: 'the route differs at turn 2' });
    expect(await sameRoute()(run([]))).toMatchObject({ score: 1 });
    expect(await sameHandoffs()(run([[{}, { handoffs: [] }]]))).toMatchObject({ name: 'sameHandoffs', score: 0 });
    expect(await sameHandoffs()(run([[{}, {}]]))).toEqual({ name: 'sameHandoffs', score: 1 });
  });

  it('replyIncludes: 1 when a reply includes the text (or matches the RegExp)', async () => {
    expect(await replyIncludes('Refund')(run([[{}, {}]]))).toEqual({ name: 'replyIncludes(Refund)', score: 1 });
    expect(await replyIncludes(/refund/gi)(run([[{}, {}]]))).toMatchObject({ score: 1 });
    expect(await replyIncludes('sorry')(run([[{}, { reply: undefined }]]))).toMatchObject({
      score: 0,
      reason: 'no reply includes sorry',
    });
    expect(() => replyIncludes('')).toThrow(/non-empty string or a RegExp/);
    expect(() => replyIncludes(3 as never)).toThrow(ReplayError);
  });

  it('noMarkersVisible: the share of replies without a marker', async () => {
    expect(
      await noMarkersVisible()(
        run([
          [{}, {}],
          [{}, { reply: 'Done [DONE]' }],
        ]),
      ),
    ).toEqual({
      name: 'noMarkersVisible',
      score: 0.5,
      reason: 'a marker is visible at turn 2',
    });
    expect(await noMarkersVisible(/<<\w+>>/g)(run([[{}, { reply: 'a <<X>>' }]]))).toMatchObject({ score: 0 });
    expect(await noMarkersVisible()(run([[{}, { reply: undefined }]]))).toMatchObject({ score: 1, reason: 'no reply' });
  });

  it('toolCalledOnce: exactly once over the session', async () => {
    expect(await toolCalledOnce('refund')(run([[{}, {}]]))).toEqual({ name: 'toolCalledOnce(refund)', score: 1 });
    expect(
      await toolCalledOnce('refund')(
        run([
          [{}, {}],
          [{}, {}],
        ]),
      ),
    ).toMatchObject({ score: 0, reason: 'called 2 times' });
    expect(await toolCalledOnce('lookup')(run([[{}, {}]]))).toMatchObject({ score: 0, reason: 'called 0 times' });
    expect(() => toolCalledOnce('')).toThrow(/needs a tool name/);
  });
});

describe('ReplayError', () => {
  it('isInstance recognises its own errors by marker, and no other error', () => {
    const e = new ReplayError({ code: 'REPLAY_CASSETTE_INVALID', message: 'm', file: 'a.json' });
    expect(ReplayError.isInstance(e)).toBe(true);
    expect(SignalyardError.isInstance(e)).toBe(true);
    expect([e.code, e.file, e.name]).toEqual(['REPLAY_CASSETTE_INVALID', 'a.json', 'ReplayError']);
    for (const other of [new SignalyardError({ code: 'X', message: 'm' }), new Error('m'), null, 'REPLAY_NOT_RECORDED'])
      expect(ReplayError.isInstance(other)).toBe(false);
  });
});
