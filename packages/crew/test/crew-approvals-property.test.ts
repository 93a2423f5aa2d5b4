// The at-most-once rule of approvals.md as a property: whatever the model replies (several calls
// per reply, call ids reused), the policy, the decisions (partial, duplicate, unknown), the JSON
// round trips, executor re-creation and failures after a claim, each call's tool runs at most
// once, and exactly once when the answer the model got is the tool's own.
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApprovalDecision, ApprovalPolicy, ChatMessage, ChatModel, ChatResponse, Tool } from '@signalyard/core';
import { CrewExecutor, CrewRunError, type CrewConfigInput, type CrewResponse, type CrewState } from '@signalyard/crew';
import { roundTrip } from './crew-support-approvals.js';
import { approvalPolicyArbitrary } from '@signalyard/test-utils/approval-policy';

const TOOLS = ['t0', 't1', 't2'] as const;

const crew = (approvals: ApprovalPolicy): CrewConfigInput => ({
  entryPoint: 'a',
  agents: [{ id: 'a', tools: [...TOOLS] }],
  settings: { maxRounds: 1000, maxToolRounds: 1000 },
  routing: { signals: { a: [{ signal: '[DONE]', target: '' }] } },
  approvals,
});

const policyArb = approvalPolicyArbitrary({
  decisions: ['allow', 'ask', 'deny'],
  maxRules: 4,
}) as fc.Arbitrary<ApprovalPolicy>;

const callArb = fc.record({
  id: fc.constantFrom('call_1', 'call_2', 'call_3'), // models reuse their ids
  tool: fc.constantFrom(...TOOLS),
  n: fc.integer({ min: 0, max: 5 }),
  throws: fc.boolean(), // a tool that throws after its side effect
  crash: fc.integer({ min: 0, max: 3 }).map((n) => n === 0), // the process dies right after the side effect
});
const repliesArb = fc.array(fc.array(callArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 5 });

const stepArb = fc.record({
  decide: fc.array(fc.record({ include: fc.boolean(), approve: fc.boolean() }), { maxLength: 4 }),
  repeatFirst: fc.boolean(),
  oldIds: fc.nat(2),
  unknownId: fc.boolean(),
  commit: fc.constantFrom('ok', 'ok', 'reject', 'save-then-reject', 'none'),
  newExecutor: fc.boolean(),
});

/** Replays `replies` in order (each call's args carry a unique token), then ends the run. */
function model(
  replies: readonly (readonly { id: string; tool: string; n: number; throws: boolean; crash: boolean }[])[],
): ChatModel {
  let next = 0;
  return {
    generate(): Promise<ChatResponse> {
      const index = next++;
      const reply = replies[index];
      if (reply === undefined) return Promise.resolve({ content: 'all done [DONE]' });
      return Promise.resolve({
        content: `reply ${index}`,
        toolCalls: reply.map((c, j) => ({
          id: c.id,
          name: c.tool,
          arguments: { n: c.n, token: `r${index}c${j}`, throws: c.throws, crash: c.crash },
        })),
      });
    },
  };
}

/** Every tool message the model got (or will get) for a call, by the call's token. */
function answers(state: CrewState): Map<string, string> {
  const out = new Map<string, string>();
  const take = (message: ChatMessage, contents: readonly (string | undefined)[]): void => {
    (message.toolCalls ?? []).forEach((call, i) => {
      const content = contents[i];
      if (content !== undefined) out.set((call.arguments as { token: string }).token, content);
    });
  };
  const history = state.history;
  for (let i = 0; i < history.length; i++) {
    const m = history[i] as ChatMessage;
    if (m.role !== 'assistant' || m.toolCalls === undefined) continue;
    const results = history.slice(i + 1, i + 1 + m.toolCalls.length);
    // a tool call is never separated from its results, which follow in call order
    expect(results.map((r) => [r.role, r.toolCallId])).toEqual(m.toolCalls.map((c) => ['tool', c.id]));
    take(
      m,
      results.map((r) => r.content),
    );
  }
  const batch = state.approvals?.batch;
  if (batch !== undefined)
    take(
      batch.message,
      batch.calls.map((c) => c.content),
    );
  return out;
}

/** At most once always; exactly once when the model was told the tool's own result. */
function checkAnswers(state: CrewState, executions: ReadonlyMap<string, number>): void {
  for (const [token, content] of answers(state)) {
    const ran = executions.get(token) ?? 0;
    if (content.startsWith('denied')) expect(ran, `${token}: ${content}`).toBe(0);
    else if (content === 'outcome unknown: not retried') expect(ran, token).toBeLessThanOrEqual(1);
    else expect(ran, `${token}: ${content}`).toBe(1);
  }
}

describe('CrewExecutor approvals: at most once (property)', () => {
  it('every call runs at most once, and exactly once when allowed or approved and the run went on', async () => {
    await fc.assert(
      fc.asyncProperty(
        policyArb,
        repliesArb,
        fc.array(stepArb, { minLength: 1, maxLength: 10 }),
        async (policy, replies, steps) => {
          const executions = new Map<string, number>();
          let kill = new AbortController();
          // A crash is injected only into runs that make their claims durable (a commit hook): without
          // one, a claim lives in memory only and the rule cannot hold across a kill -9.
          let durable = true;
          const tools: Tool[] = TOOLS.map((name) => ({
            name,
            parameters: { type: 'object' },
            execute: (args) => {
              const { token, throws, crash } = args as { token: string; throws: boolean; crash: boolean };
              executions.set(token, (executions.get(token) ?? 0) + 1);
              if (crash && durable) {
                // kill -9 between the side effect and the next save: nothing after the last commit survives
                kill.abort(new Error('kill -9'));
                return new Promise(() => undefined);
              }
              return throws ? Promise.reject(new Error(`${name} broke after its side effect`)) : Promise.resolve('ok');
            },
          }));
          const shared = model(replies);
          let executor = new CrewExecutor({ crew: crew(policy), model: shared, tools });
          let store: CrewState = { history: [] }; // the last durable save
          for (const step of steps) {
            if (step.newExecutor) executor = new CrewExecutor({ crew: crew(policy), model: shared, tools });
            const held = (store.approvals?.batch?.calls ?? []).flatMap((c) =>
              c.status === 'held' && c.approval ? [c.approval.id] : [],
            );
            const decisions: ApprovalDecision[] = [];
            held.forEach((id, i) => {
              const d = step.decide[i];
              if (d?.include === true) decisions.push({ id, approved: d.approve, reason: 'because' });
            });
            if (step.repeatFirst && decisions[0] !== undefined) decisions.push({ ...decisions[0], approved: true });
            for (const id of (store.approvals?.decided ?? []).slice(0, step.oldIds))
              decisions.push({ id, approved: true });
            const before = new Map(executions);
            if (step.unknownId) {
              const error = await executor
                .execute('go', {
                  state: roundTrip(store),
                  approvals: [...decisions, { id: 'ap-unknown', approved: true }],
                })
                .then(
                  () => undefined,
                  (e: unknown) => e,
                );
              expect(CrewRunError.isInstance(error) && error.code).toBe('CREW_APPROVAL_UNKNOWN');
              expect(executions).toEqual(before); // nothing applied
            }
            kill = new AbortController();
            durable = step.commit !== 'none';
            let commits = 0;
            const commit =
              step.commit === 'none'
                ? undefined
                : (state: CrewState): Promise<void> => {
                    commits++;
                    if (commits === 1 && step.commit === 'reject') return Promise.reject(new Error('conflict'));
                    store = roundTrip(state);
                    if (commits === 1 && step.commit === 'save-then-reject')
                      return Promise.reject(new Error('died after the save'));
                    return Promise.resolve();
                  };
            let response: CrewResponse | undefined;
            let failure: unknown;
            await executor
              .execute('go', {
                state: roundTrip(store),
                approvals: decisions,
                abortSignal: kill.signal,
                ...(commit === undefined ? {} : { commit }),
              })
              .then(
                (r) => {
                  response = r;
                },
                (error: unknown) => {
                  failure = error;
                },
              );
            if (response !== undefined) {
              store = roundTrip(response.state); // the caller saves what the run returned
              checkAnswers(response.state, executions);
            } else {
              // the last durable save stays
              expect(CrewRunError.isInstance(failure) ? failure.code : failure).toMatch(
                /^(CREW_COMMIT_FAILED|ABORTED)$/,
              );
            }
            for (const count of executions.values()) expect(count).toBeLessThanOrEqual(1);
            checkAnswers(store, executions);
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000); // CPU-heavy: over 5 s on a loaded machine
});
