// The at-most-once rule of approvals.md through the Runner, as a property: two runners over one
// store (no session lock) race to approve the same pending calls of a crew, with random policies,
// random model replies (several calls each, call ids reused), random partial decisions, the same
// call decided by both at once (alike or contrary), and decisions repeated after they were
// applied. Every call's tool runs at most once; exactly once when the model was told the tool's
// own result; never when it was told `denied`.
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MemoryCheckpointStore,
  SignalKind,
  createRunner,
  crewEngine,
  signal,
  type ApprovalDecision,
  type ApprovalPolicy,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type CrewConfigInput,
  type Outcome,
  type Runner,
  type Tool,
} from 'signalyard';
import { approvalPolicyArbitrary } from '@signalyard/test-utils/approval-policy';

const TOOLS = ['t0', 't1', 't2'] as const;
const KEY = 'agent:desk:main';

const policyArb = approvalPolicyArbitrary({
  decisions: ['allow', 'ask', 'ask', 'deny'],
  maxRules: 3,
}) as fc.Arbitrary<ApprovalPolicy>;

const callArb = fc.record({
  id: fc.constantFrom('call_1', 'call_2'), // models reuse their ids
  tool: fc.constantFrom(...TOOLS),
  n: fc.integer({ min: 0, max: 5 }),
});
type Call = typeof callArb extends fc.Arbitrary<infer C> ? C : never;
const repliesArb = fc.array(fc.array(callArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 });

/** One step: each runner decides some of the pending calls, at the same moment. */
const stepArb = fc.record({
  a: fc.array(fc.record({ include: fc.boolean(), approve: fc.boolean() }), { maxLength: 4 }),
  b: fc.array(fc.record({ include: fc.boolean(), approve: fc.boolean() }), { maxLength: 4 }),
  /** B sends exactly A's decisions (the same call approved twice at once). */
  same: fc.boolean(),
  /** B also repeats an approval already applied in an earlier step. */
  repeat: fc.boolean(),
});

/**
 * The model, from the conversation alone (both runners ask it): the r-th reply with tool calls
 * once r earlier ones are in the history, then the end. Each call's arguments carry a unique token.
 */
function model(replies: readonly (readonly Call[])[]): { generate(request: ChatRequest): Promise<ChatResponse> } {
  return {
    async generate(request) {
      await new Promise((resolve) => setImmediate(resolve)); // let the other runner move
      const round = request.messages.filter((m) => m.role === 'assistant' && m.toolCalls !== undefined).length;
      const reply = replies[round];
      if (reply === undefined) return { content: 'all done [DONE]' };
      return {
        content: `reply ${round}`,
        toolCalls: reply.map((c, j) => ({ id: c.id, name: c.tool, arguments: { n: c.n, token: `r${round}c${j}` } })),
      };
    },
  };
}

/** Tools that count their runs by token (shared by both runners, as a shared side effect would be). */
function tools(runs: Map<string, number>): Tool[] {
  return TOOLS.map((name) => ({
    name,
    parameters: { type: 'object' },
    execute: async (args: unknown) => {
      const { token } = args as { token: string };
      runs.set(token, (runs.get(token) ?? 0) + 1);
      await new Promise((resolve) => setImmediate(resolve)); // the other runner may act meanwhile
      return `${name} ran ${token}`;
    },
  }));
}

/** Every answer the model got for a call, by the call's token; a call is never separated from its results. */
function answers(history: readonly ChatMessage[]): Map<string, string> {
  const out = new Map<string, string>();
  history.forEach((m, i) => {
    if (m.role !== 'assistant' || m.toolCalls === undefined) return;
    const results = history.slice(i + 1, i + 1 + m.toolCalls.length);
    expect(results.map((r) => [r.role, r.toolCallId])).toEqual(m.toolCalls.map((c) => ['tool', c.id]));
    m.toolCalls.forEach((call, j) => out.set((call.arguments as { token: string }).token, results[j]?.content ?? ''));
  });
  return out;
}

function runnerOver(
  store: MemoryCheckpointStore,
  crew: CrewConfigInput,
  replies: readonly (readonly Call[])[],
  runs: Map<string, number>,
): Runner {
  return createRunner({
    store,
    agents: [{ id: 'desk', engine: crewEngine(crew, { model: model(replies), tools: tools(runs) }) }],
  });
}

const decisionsFor = (
  pending: readonly string[],
  picks: readonly { include: boolean; approve: boolean }[],
): ApprovalDecision[] =>
  pending.flatMap((id, i) => (picks[i]?.include === true ? [{ id, approved: picks[i].approve }] : []));

describe('approvals through two runners over one store: at most once (property)', () => {
  it('every call runs at most once, exactly once when the model got its result, never when denied', async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, repliesArb, fc.array(stepArb, { maxLength: 6 }), async (policy, replies, steps) => {
        const crew: CrewConfigInput = {
          entryPoint: 'clerk',
          agents: [{ id: 'clerk', tools: [...TOOLS] }],
          settings: { maxRounds: 100, maxToolRounds: 100 },
          routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
          approvals: policy,
        };
        const store = new MemoryCheckpointStore();
        const runs = new Map<string, number>();
        const a = runnerOver(store, crew, replies, runs);
        const b = runnerOver(store, crew, replies, runs);
        const outcomes: Outcome[] = [await a.dispatch(KEY, signal(SignalKind.UserMessage, 'go'))];
        const applied: ApprovalDecision[] = [];
        const pendingIds = async (): Promise<string[]> =>
          ((await a.session(KEY))?.pendingApprovals ?? []).map((p) => p.id);

        for (const step of steps) {
          const pending = await pendingIds();
          if (pending.length === 0) break;
          const fromA = decisionsFor(pending, step.a);
          let fromB = step.same ? fromA : decisionsFor(pending, step.b);
          const earlier = applied.find((d) => !fromB.some((x) => x.id === d.id));
          if (step.repeat && earlier !== undefined) fromB = [...fromB, earlier];
          const racing = [
            fromA.length > 0 ? a.approve(KEY, fromA, { by: 'a' }) : undefined,
            fromB.length > 0 ? b.approve(KEY, fromB, { by: 'b' }) : undefined,
          ];
          outcomes.push(...(await Promise.all(racing.filter((p) => p !== undefined))));
          applied.push(...fromA, ...fromB.filter((d) => !fromA.some((x) => x.id === d.id)));
        }
        // Then one runner or the other decides what is left, until the run ends.
        for (let turn = 0; ; turn++) {
          const pending = await pendingIds();
          if (pending.length === 0) break;
          const runner = turn % 2 === 0 ? b : a;
          outcomes.push(
            await runner.approve(
              KEY,
              pending.map((id, i) => ({ id, approved: i % 2 === 0 })),
            ),
          );
        }

        // The one failure a race may cause: an approval whose decisions were committed (its
        // approved calls ran) and whose final save then lost to the other runner says so.
        const failed = outcomes.filter((o) => o.status === 'failed');
        for (const o of failed) {
          expect(o.error?.code, o.error?.message).toBe('CHECKPOINT_CONFLICT');
          expect(o.error?.message).toMatch(/^The decisions on .* were committed, /);
          expect(o.action?.type).toBe('continue');
        }
        for (const [token, n] of runs) expect(n, `${token} ran ${n} times`).toBe(1);
        // The run went on to its end: nothing pending, the model's last reply saved.
        const view = await b.session(KEY);
        expect(view?.pendingApprovals).toEqual([]);
        expect(view?.history.at(-1)?.content).toBe('all done [DONE]');
        const told = answers(view?.history ?? []);
        for (const [token, content] of told) {
          const ran = runs.get(token) ?? 0;
          if (content.startsWith('denied')) expect(ran, `${token}: ${content}`).toBe(0);
          else if (content === 'outcome unknown: not retried') expect(ran, token).toBeLessThanOrEqual(1);
          else expect([ran, content], token).toEqual([1, expect.stringContaining(`ran ${token}`)]);
        }
        // Every call that ran was answered (nothing ran behind the conversation's back).
        for (const token of runs.keys()) expect(told.has(token), token).toBe(true);
        await a.close();
        await b.close();
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});
