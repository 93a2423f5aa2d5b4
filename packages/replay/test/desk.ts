// A small support desk for the replay tests: a crew (triage → billing, handoffs, tools, an
// approvals policy), an FSM strategy on the desk agent (open → escalated, guarded), a second
// agent behind a routing binding. `desk(parts, changes)` builds it with planted changes.
import {
  Action,
  SignalKind,
  type ChatModel,
  type ChatRequest,
  type Clock,
  type CheckpointStore,
  type Plugin,
  type Tool,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { FsmStrategy } from '@signalyard/fsm';
import { createRunner, crewEngine, type Runner } from 'signalyard';

/** What a test may plant in today's configuration. */
export interface DeskChanges {
  /** The marker triage hands off to billing with (default `[TO_BILLING]`). */
  readonly marker?: string;
  /** The largest refund allowed without asking (default 100). */
  readonly threshold?: number;
  /** Flip the escalation guard (VIPs refused, others let through). */
  readonly guardFlipped?: boolean;
  /** Triage's system prompt (default `You triage support requests.`). */
  readonly prompt?: string;
  /** The agent the `web` channel is bound to (default `desk`). */
  readonly webAgent?: string;
}

const ESCALATE = SignalKind.custom('escalate');

const crewYaml = (c: DeskChanges = {}): string => `
entry_point: triage
agents:
  - id: triage
    system_prompt: ${JSON.stringify(c.prompt ?? 'You triage support requests.')}
  - id: billing
    system_prompt: You handle refunds.
    tools: [lookup_order, refund]
routing:
  signals:
    triage:
      - { signal: ${JSON.stringify(c.marker ?? '[TO_BILLING]')}, target: billing }
      - { signal: "[ANSWERED]", target: "" }
    billing:
      - { signal: "[DONE]", target: "" }
approvals:
  rules:
    - { name: small-refunds, tool: refund, when: [{ path: amount, lte: ${c.threshold ?? 100} }], decision: allow }
    - { name: big-refunds, tool: refund, decision: ask }
  default: allow
`;

/** The live model: triage sends refunds to billing; billing looks the order up and refunds. */
export function liveModel(): ChatModel {
  return scriptedModel((req: ChatRequest) => {
    const last = req.messages.at(-1);
    const user = req.messages.findLast((m) => m.role === 'user')?.content ?? '';
    if (req.agentId === 'triage')
      return user.includes('refund') ? 'Passing you to billing. [TO_BILLING]' : `You said: ${user}. [ANSWERED]`;
    if (last?.role === 'tool') return `Done: ${last.content}. [DONE]`;
    const amount = Number(/\d+/.exec(user)?.[0] ?? 0);
    return {
      content: 'Checking.',
      toolCalls: [
        { id: `l${req.messages.length}`, name: 'lookup_order', arguments: { order: 'A1' } },
        { id: `r${req.messages.length}`, name: 'refund', arguments: { amount } },
      ],
    };
  });
}

/** The desk's tools; `calls` counts every execute. */
export function deskTools(): { tools: Tool[]; calls: string[] } {
  const calls: string[] = [];
  const tool = (name: string, result: (args: unknown) => unknown): Tool => ({
    name,
    parameters: { type: 'object' },
    execute: (args) => {
      calls.push(name);
      return Promise.resolve(result(args));
    },
  });
  return {
    calls,
    tools: [
      tool('lookup_order', () => ({ order: 'A1', status: 'shipped' })),
      tool('refund', (args) => `refunded ${String((args as { amount?: number }).amount)}`),
    ],
  };
}

/** Tools that throw if called (a replay must never run them). */
export function throwingTools(): { tools: Tool[]; calls: string[] } {
  const calls: string[] = [];
  const tool = (name: string): Tool => ({
    name,
    parameters: { type: 'object' },
    execute: () => {
      calls.push(name);
      throw new Error(`${name} ran during a replay`);
    },
  });
  return { calls, tools: [tool('lookup_order'), tool('refund')] };
}

/** What the desk is built from. */
export interface DeskParts {
  readonly store: CheckpointStore;
  readonly clock: Clock;
  readonly model: ChatModel;
  readonly tools: readonly Tool[];
  readonly plugins?: readonly Plugin[];
}

export function desk(parts: DeskParts, c: DeskChanges = {}): Runner {
  const escalation = FsmStrategy.builder()
    .initial('open')
    .transition('open', 'escalate', 'escalated', {
      guard: (input) => ((input as { vip?: unknown } | null)?.vip === true) !== (c.guardFlipped === true),
    })
    .define();
  return createRunner({
    agents: [
      {
        id: 'desk',
        strategy: () => escalation.create(),
        routes: [{ kind: ESCALATE, action: Action.transition('escalate'), name: 'escalate' }],
        engine: crewEngine(parseCrewConfig(crewYaml(c)), { model: parts.model, tools: parts.tools }),
      },
      { id: 'sales', engine: async () => ({ messages: [{ role: 'assistant', content: 'Sales here.' }] }) },
    ],
    routing: { defaultAgentId: 'desk', bindings: [{ agentId: c.webAgent ?? 'desk', match: { channel: 'web' } }] },
    store: parts.store,
    clock: parts.clock,
    ...(parts.plugins !== undefined && { plugins: parts.plugins }),
  });
}

/** A clock that moves one second per read. */
export function steppingClock(start = Date.UTC(2026, 10, 20, 9, 0, 0)): Clock {
  let now = start;
  return { now: () => (now += 1000) };
}

export const dm = (user: string, text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id: user }, text });

/**
 * The recorded week: four sessions — a greeting; a small refund (allowed by rule); a big refund
 * held for approval, then approved; a VIP escalation and a refused one.
 */
export async function liveWeek(runner: Runner): Promise<void> {
  await runner.handle(dm('u1', 'hello there'));
  await runner.handle(dm('u1', 'what are your hours?'));
  await runner.handle(dm('u2', 'refund 40 please'));
  const held = await runner.handle(dm('u3', 'refund 400 please'));
  const id = held.pendingApprovals?.[0]?.id;
  if (id === undefined) throw new Error(`expected a held refund, got ${held.status}`);
  await runner.approve(held.sessionKey, [{ id, approved: true }], { by: 'alice' });
  await runner.handle(dm('u3', 'thanks'));
  const vip = await runner.handle(dm('u4', 'I am a VIP'));
  await runner.dispatch(vip.sessionKey, { kind: ESCALATE, payload: { vip: true } });
  const plain = await runner.handle(dm('u5', 'hi'));
  await runner.dispatch(plain.sessionKey, { kind: ESCALATE, payload: { vip: false } });
}
