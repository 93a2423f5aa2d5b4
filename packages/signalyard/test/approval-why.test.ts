// Why a tool call ran: the approvals policy's decisions (with the deciding rule's name) are
// recorded on the transcript's tool entries and in the version's cause as
// `cause.summary.approvals` (replay.md's RunSummary entries plus the rule).
import type { Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { createRunner, crewEngine } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { keptRecords, policyRecordOf, withPolicyRecords } from '../src/crew-policy-record.js';

const crew = parseCrewConfig(
  `
entry_point: clerk
agents:
  - id: clerk
    tools: [refund, lookup]
routing:
  signals:
    clerk:
      - { signal: "[DONE]", target: "" }
approvals:
  rules:
    - { name: refunds-under-100, tool: refund, when: [{ path: amount, lte: 100 }], decision: allow }
    - { name: big-refunds, tool: refund, decision: ask, reason: over $100 }
  default: allow
`,
  { file: 'crew.yaml' },
);

const dm = (text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id: 'u1' }, text });

function runner() {
  const runs: string[] = [];
  const tool = (name: string): Tool => ({
    name,
    parameters: { type: 'object' },
    execute: (args) => {
      runs.push(`${name}:${JSON.stringify(args)}`);
      return Promise.resolve('ok');
    },
  });
  const model = scriptedModel((req) => {
    if (req.messages.at(-1)?.role === 'tool') return 'Done. [DONE]';
    const amount = Number(/\d+/.exec(req.messages.findLast((m) => m.role === 'user')?.content ?? '')?.[0] ?? 0);
    return {
      content: `Refunding ${amount}.`,
      toolCalls: [
        { id: `r${req.messages.length}`, name: 'refund', arguments: { amount } },
        { id: `l${req.messages.length}`, name: 'lookup', arguments: {} },
      ],
    };
  });
  const r = createRunner({
    agents: [{ id: 'desk', engine: crewEngine(crew, { model, tools: [tool('refund'), tool('lookup')] }) }],
    routing: { defaultAgentId: 'desk' },
  });
  return { runner: r, runs };
}

describe('the approvals policy says why a call ran', () => {
  it('an allow by a named rule and by the default: on the transcript entry and in cause.summary.approvals', async () => {
    const { runner: r, runs } = runner();
    const outcome = await r.handle(dm('refund 42'));
    expect(outcome.status).toBe('completed');
    expect(runs).toEqual(['refund:{"amount":42}', 'lookup:{}']);
    const tools = (await r.transcript(outcome.sessionKey)).filter((e) => e.type === 'tool');
    expect(tools.map((e) => e.approval)).toEqual([
      { decision: 'allow', rule: 'refunds-under-100' },
      { decision: 'allow' }, // the policy's default: no rule
    ]);
    for await (const v of r.history(outcome.sessionKey, { limit: 1 })) {
      expect(v.cause?.summary).toMatchObject({
        status: 'completed',
        approvals: [
          { tool: 'refund', decision: 'allow', rule: 'refunds-under-100' },
          { tool: 'lookup', decision: 'allow' },
        ],
      });
    }
    await r.close();
  });

  it('an ask by a named rule: the pending approval and the transcript name it; the version that resumes records nothing new', async () => {
    const { runner: r, runs } = runner();
    const paused = await r.handle(dm('refund 420'));
    expect(paused.pendingApprovals).toEqual([expect.objectContaining({ toolName: 'refund', ruleName: 'big-refunds' })]);
    expect(runs).toEqual(['lookup:{}']);
    let cause;
    for await (const v of r.history(paused.sessionKey, { limit: 1 })) cause = v.cause;
    expect(cause).toMatchObject({
      summary: {
        approvals: [
          { tool: 'refund', decision: 'ask', rule: 'big-refunds' },
          { tool: 'lookup', decision: 'allow' },
        ],
      },
    });
    const held = (await r.transcript(paused.sessionKey)).filter((e) => e.type === 'tool');
    expect(held.map((e) => [e.status, e.approval])).toEqual([
      ['pending_approval', { decision: 'ask', rule: 'big-refunds' }],
      ['done', { decision: 'allow' }],
    ]);
    const done = await r.approve(paused.sessionKey, [{ id: paused.pendingApprovals![0]!.id, approved: true }]);
    expect(done.status).toBe('completed');
    // The resuming version's summary records no new policy decision.
    for await (const v of r.history(paused.sessionKey, { limit: 1 }))
      expect(v.cause?.summary).toMatchObject({ status: 'completed', approvals: [] });
    const after = (await r.transcript(paused.sessionKey)).filter((e) => e.type === 'tool');
    expect(after.map((e) => e.approval)).toEqual([{ decision: 'ask', rule: 'big-refunds' }, { decision: 'allow' }]);
    await r.close();
  });

  it('records: members and malformed events ignored, the newest 256 kept, repeated call ids matched newest to latest', () => {
    expect(
      policyRecordOf({ type: 'approval_decided', toolCallId: 'c', toolName: 't', decision: 'allow', ruleName: 'r' }),
    ).toEqual({ call: 'c', decision: 'allow', rule: 'r' });
    expect(
      policyRecordOf({ type: 'approval_decided', toolCallId: 'c', decision: 'allow', group: 'g' }),
    ).toBeUndefined();
    expect(policyRecordOf({ type: 'approval_decided', toolCallId: 'c', decision: 'maybe' })).toBeUndefined();
    expect(policyRecordOf({ type: 'tool_start', toolCallId: 'c', decision: 'allow' })).toBeUndefined();
    const many = Array.from({ length: 256 }, (_, i) => ({ call: `x${i}`, decision: 'allow' as const }));
    const kept = keptRecords(many, [{ call: 'new', decision: 'deny' }])!;
    expect(kept).toHaveLength(256);
    expect(kept.at(-1)).toEqual({ call: 'new', decision: 'deny' });
    expect(keptRecords(undefined, [])).toBeUndefined();
    const call = { id: 'same', name: 'refund', arguments: {} };
    const entries = [
      { type: 'tool' as const, call, status: 'done' as const },
      { type: 'tool' as const, call, status: 'done' as const },
    ];
    const records = [
      { call: 'same', decision: 'allow' as const, rule: 'first' },
      { call: 'same', decision: 'deny' as const },
    ];
    expect(withPolicyRecords([...entries], records).map((e) => (e.type === 'tool' ? e.approval : undefined))).toEqual([
      { decision: 'allow', rule: 'first' },
      { decision: 'deny' },
    ]);
    expect(withPolicyRecords([...entries], [{ call: 1 }])).toEqual(entries);
    expect(withPolicyRecords([...entries], 'nope')).toEqual(entries);
  });
});
