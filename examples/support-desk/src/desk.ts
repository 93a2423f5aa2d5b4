// The support desk: its agents, their strategies and engines, and the plugins — built once per
// runner over a given store.
import { readFileSync } from 'node:fs';
import type { ChatModel, ChatRequest, ChatResponse, CheckpointStore, McpToolSource, Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  Action,
  FsmStrategy,
  SignalKind,
  auditLogPlugin,
  createRunner,
  crewEngine,
  definePipeline,
  parseCrewConfig,
  parseRoutingConfig,
  pipelineEngine,
  rateLimitPlugin,
  type AuditEntry,
  type CrewResponse,
  type Engine,
  type EngineFn,
  type Envelope,
  type Runner,
  type RunnerOptions,
  type Signal,
} from 'signalyard';

const config = (file: string): string => readFileSync(new URL(`../config/${file}`, import.meta.url), 'utf8');

export const routing = parseRoutingConfig(config('routing.toml'));
const deskCrew = parseCrewConfig(config('desk-crew.yaml'));
const vipCrew = parseCrewConfig(config('vip-crew.yaml'));

const textOf = (s: Signal): string => (s.payload as { text?: string } | null)?.text ?? '';
const YES = /^\s*(y|yes|yes please|ok|go ahead|confirm)\s*[.!]*\s*$/i;
const NO = /^\s*(n|no|no thanks|cancel)\s*[.!]*\s*$/i;

/**
 * The desk's workflow. While a fix awaits the customer's confirmation, "yes" / "no" are
 * transitions decided by the strategy tier (no model call); while it is being carried out,
 * user messages are refused.
 */
const deskWorkflow = FsmStrategy.builder()
  .initial('idle')
  .state('idle')
  .state('triaging')
  .state('awaiting_confirmation')
  .state('resolving')
  .state('closed')
  .transition('idle', 'open', 'triaging')
  .transition('triaging', 'propose', 'awaiting_confirmation')
  .transition('awaiting_confirmation', 'confirm', 'resolving')
  .transition('awaiting_confirmation', 'decline', 'triaging')
  .transition('resolving', 'resolve', 'closed')
  .transition('closed', 'reopen', 'triaging')
  .route(
    {
      kind: SignalKind.UserMessage,
      name: 'confirm-yes',
      predicate: (s) => YES.test(textOf(s)),
      action: Action.transition('confirm'),
    },
    { inStates: ['awaiting_confirmation'] },
  )
  .route(
    {
      kind: SignalKind.UserMessage,
      name: 'confirm-no',
      predicate: (s) => NO.test(textOf(s)),
      action: Action.transition('decline'),
    },
    { inStates: ['awaiting_confirmation'] },
  )
  .route(
    { kind: SignalKind.UserMessage, name: 'busy-resolving', action: Action.reject('resolving') },
    { inStates: ['resolving'] },
  )
  .define();

/** The refund review: a high-risk refund waits for a human's confirmation. */
const refundReview = definePipeline({
  name: 'refund-review',
  stages: [
    {
      name: 'assess',
      run: (ctx) => {
        const text = (ctx.input as { text: string }).text;
        const amount = Number(/\$(\d+)/.exec(text)?.[1] ?? 0);
        const refund = /\b(R-\d+)\b/.exec(text)?.[1] ?? 'R-?';
        return { refund, amount, risk: amount > 100 ? 'high' : 'low' };
      },
      routingRules: [{ condition: 'risk', value: 'high', target: 'confirmation' }],
      defaultNext: 'execute',
    },
    {
      name: 'execute',
      run: (ctx) => ({ refunded: (ctx.outputs.assess as { amount: number }).amount, reference: 'RF-1017' }),
    },
  ],
  confirmationResumeStage: 'execute',
});

/** The review pipeline's assistant message. */
export const renderReview = (env: Envelope): string => {
  const assess = env.outputs.assess as { refund: string; amount: number } | undefined;
  if (env.interrupt !== undefined && !env.terminated)
    return `Refund ${assess?.refund ?? '?'} of $${assess?.amount ?? 0} is high risk: approve? (yes/no)`;
  if (env.terminalReason === 'user_denied') return `Refund ${assess?.refund ?? '?'} declined.`;
  const done = env.outputs.execute as { refunded: number; reference: string } | undefined;
  return done === undefined
    ? `Review ended: ${env.terminalReason ?? '?'}`
    : `Refund ${assess?.refund ?? '?'}: $${done.refunded} refunded (${done.reference}).`;
};

/** The user messages of a request after the last assistant message, joined. */
const sinceLastReply = (request: ChatRequest): string => {
  const last = request.messages.findLastIndex((m) => m.role === 'assistant');
  return request.messages
    .slice(last + 1)
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join(' ');
};

/**
 * A reply that ends with a call to the transfer tool `name` (the crew hands off by tool:
 * `handoff_mode: tool`): `transfer_to_billing` hands off, `propose_fix` / `refunded` / `finish`
 * end the run. Call ids are unique in the history.
 */
const via = (request: ChatRequest, content: string, name: string): ChatResponse => ({
  content,
  toolCalls: [{ id: `${name}-${request.messages.length}`, name, arguments: {} }],
});

/** Billing's answer: a refund asked for with an amount is a `refund` tool call; its result, the reply. */
const billing = (request: ChatRequest, said: string): ChatResponse => {
  const last = request.messages.at(-1);
  const answered = request.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === last?.toolCallId);
  // The refund's result (not the answer to triage's transfer call, which billing sees first).
  if (last?.role === 'tool' && answered?.name === 'refund')
    return via(request, `${last.content}: it is on its way to your card.`, 'refunded');
  if (/crash/i.test(said)) return { content: 'Billing: the account is paid up; nothing to do on our side.' };
  // The order's details come from the order-lookup MCP server (the agent's `orders_get_order`).
  if (last?.role === 'tool' && answered?.name === 'orders_get_order') {
    const order = JSON.parse(last.content) as { order: string; item: string; total: number };
    return via(
      request,
      `The receipt for order ${order.order} (${order.item}, $${order.total}) is on its way to your email.`,
      'finish',
    );
  }
  if (/receipt/i.test(said))
    return {
      content: 'Looking the order up.',
      toolCalls: [{ id: `lookup-${request.messages.length}`, name: 'orders_get_order', arguments: { order: '5531' } }],
    };
  const asked = /refund .*?order (\d+).*?\$(\d+)/i.exec(said);
  if (asked !== null)
    return {
      content: `Refunding order ${asked[1]}.`,
      toolCalls: [{ id: 'call-1', name: 'refund', arguments: { order: asked[1], amount: Number(asked[2]) } }],
    };
  return via(request, 'I see a duplicate charge of $42 on invoice INV-881. Shall I refund it?', 'propose_fix');
};

/**
 * A scripted model: answers by agent and by what the customer said, so any order of events works.
 * It hands off and finishes with transfer tool calls, as a tool-calling model does.
 */
export function deskModel(): ChatModel & { readonly calls: readonly ChatRequest[] } {
  // Replies stream in pieces of at most 8 characters, as a real model's tokens would arrive.
  return scriptedModel(
    (request) => {
      const said = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      switch (request.agentId) {
        case 'triage':
          if (/invoice|charge|refund/i.test(said))
            return via(request, 'This is a billing matter.', 'transfer_to_billing');
          if (/crash|error|bug/i.test(said))
            return via(request, 'Could be the app or the account; asking both teams.', 'transfer_to_investigate');
          return via(request, 'Thanks for the details, we are on it.', 'finish');
        case 'billing':
          return billing(request, said);
        case 'tech':
          return 'Tech: version 3.2 crashes at startup when its cache is corrupt.';
        case 'lead':
          if (/hello/i.test(said))
            return via(request, 'Still here: shall I send you the steps to clear the app cache?', 'propose_fix');
          return via(request, 'Clearing the app cache fixes this; shall I send you the steps?', 'propose_fix');
        case 'concierge':
          // A merged turn sees every message the VIP sent since the last reply.
          if (/card/i.test(sinceLastReply(request)) && /\d{4}/.test(sinceLastReply(request)))
            return 'Your card ending 4417 is blocked for your safety; a senior agent is unblocking it now.';
          return 'Welcome back! A senior agent is on your account right now.';
        default:
          return 'How can I help?';
      }
    },
    { streamChunkChars: 8 },
  );
}

/** A refund the billing agent's `refund` tool carried out. */
export interface Refund {
  readonly order: string;
  readonly amount: number;
  readonly reference: string;
}

/** Where refunds are recorded: a list, or anything that takes them in order (a file, a payment API's log). */
export interface RefundLedger {
  readonly length: number;
  push(refund: Refund): unknown;
}

/**
 * Billing's `refund` tool: the side effect is a refund (here, an entry in `ledger`). The crew's
 * `approvals:` policy (config/desk-crew.yaml) lets it run only after a person approved a refund
 * over $100 — and then once.
 */
function refundTool(ledger: RefundLedger): Tool {
  return {
    name: 'refund',
    description: 'Refund an order to the card it was paid with.',
    parameters: {
      type: 'object',
      properties: { order: { type: 'string' }, amount: { type: 'number' } },
      required: ['order', 'amount'],
    },
    execute: (args) => {
      const { order, amount } = args as { order: string; amount: number };
      const refund = { order, amount, reference: `RF-${2000 + ledger.length + 1}` };
      ledger.push(refund);
      return Promise.resolve(`$${amount} refunded for order ${order} (${refund.reference})`);
    },
  };
}

/** Who may approve a refund the desk's crew holds (`runner.approve(…, { by })`). */
const REVIEWERS: ReadonlySet<string> = new Set(['rita@finance']);

/**
 * The desk's engine: the crew (streaming when the turn is read as a stream), then the FSM moves
 * the crew's outcome calls for. Its transcript and diagrams are the crew's.
 */
function deskEngine(model: ChatModel, ledger: RefundLedger, orders: McpToolSource): Engine {
  const crew = crewEngine(deskCrew, { model, tools: [refundTool(ledger)], mcp: orders });
  const turn: EngineFn = async (ctx) => {
    const result = await crew.turn(ctx);
    const response = result.output as CrewResponse;
    const state = String(ctx.strategy.snapshot().current_state);
    // The signal that ended the run, whether its marker matched or its transfer tool was called.
    const proposes = response.signal === '[PROPOSE_FIX]';
    const actions = [];
    if (state === 'idle') actions.push(Action.transition('open'));
    if (state === 'closed') actions.push(Action.transition('reopen'));
    if (proposes && state !== 'awaiting_confirmation') actions.push(Action.transition('propose'));
    return { ...result, actions };
  };
  return { ...crew, turn };
}

/**
 * Builds a runner for the desk over `store`. Its billing agent looks orders up through `orders`
 * (the order-lookup MCP server: `connectOrders()`). The refunds its crew carries out are appended
 * to `ledger` (default: a list of its own).
 */
export function createDesk(
  store: CheckpointStore,
  model: ChatModel,
  audit: (entry: AuditEntry) => void,
  orders: McpToolSource,
  ledger: RefundLedger = [],
): Runner {
  return createRunner(deskOptions(store, model, audit, orders, ledger));
}

/**
 * The desk's runner options over `store` (what {@link createDesk} builds a runner from, and what
 * `src/runner.config.ts` gives the `signalyard` command).
 */
export function deskOptions(
  store: CheckpointStore,
  model: ChatModel,
  audit: (entry: AuditEntry) => void,
  orders: McpToolSource,
  ledger: RefundLedger,
): RunnerOptions {
  return {
    routing,
    store,
    agents: [
      {
        id: 'desk',
        strategy: () => deskWorkflow.create(),
        routes: [
          { kind: SignalKind.Timer, name: 'resolution-done', action: Action.transition('resolve') },
          // Only a reviewer's approval resumes a held refund; anyone else's is refused (it stays pending).
          {
            kind: SignalKind.ToolApproval,
            name: 'reviewers-only',
            predicate: (s) => !REVIEWERS.has((s.payload as { by?: string }).by ?? ''),
            action: Action.reject('not a reviewer'),
          },
        ],
        engine: deskEngine(model, ledger, orders),
      },
      // A VIP who sends "wait, also…" while the concierge answers gets one answer to all of it.
      { id: 'vip', engine: crewEngine(vipCrew, { model }), whenBusy: 'collect' },
      { id: 'reviews', engine: pipelineEngine(refundReview, { render: renderReview }) },
    ],
    plugins: [rateLimitPlugin({ perSession: 3, windowMs: 60_000 }), auditLogPlugin(audit)],
  };
}
