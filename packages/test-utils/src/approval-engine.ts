// A scripted engine that asks for a person's approval before its one tool runs, and resumes
// when given decisions — the Runner's approval tests (signalyard, store-sqlite, store-postgres)
// drive it. It keeps the at-most-once rule the way a crew does: before the approved call runs, it
// records the call as started in its state and commits that state (`ctx.commit`); a call found
// started with no result is answered `outcome unknown: not retried`, never run again.
// Typed structurally (this package depends on nothing but vitest).

/** The parts of a Runner `TurnContext` the engine reads. */
export interface ApprovalTurnContext {
  readonly signal: { readonly kind: string; readonly payload: unknown };
  readonly state: unknown;
  readonly approvals: readonly { readonly id: string; readonly approved: boolean; readonly reason?: string }[];
  commit(state: unknown): Promise<void>;
}

/** A pending approval as the engine reports it (a core `PendingApproval`). */
export interface TestPendingApproval {
  readonly id: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly arguments: unknown;
  readonly agentId: string;
  readonly requestedAt: string;
}

/** The engine's state (JSON). */
export interface ApprovalEngineState {
  /** The next approval number. */
  readonly next: number;
  /** The held call, while it waits for a decision. */
  readonly held?: TestPendingApproval;
  /** Approval ids whose call was claimed (recorded as started) before it ran. */
  readonly started: readonly string[];
  /** Approval ids already decided (a repeated decision is ignored). */
  readonly decided: readonly string[];
}

/** What a turn of the engine returns (a Runner `TurnResult`). */
export interface ApprovalTurnResult {
  messages?: { role: 'assistant' | 'tool'; content: string; toolCallId?: string }[];
  state: ApprovalEngineState;
  pendingApprovals?: TestPendingApproval[];
  output?: unknown;
}

/** Options of {@link approvalEngine}. */
export interface ApprovalEngineOptions {
  /** The side effect: runs once per approved call (its return value is the tool result). */
  readonly tool: (args: { readonly request: string }) => unknown;
  /** Called before the claim is committed (a test can hold two runners' turns there, to race them). */
  readonly beforeClaim?: () => unknown;
  /** Called after the claim is committed and before the tool runs (a test can hold the turn there). */
  readonly beforeTool?: () => unknown;
}

const EMPTY: ApprovalEngineState = { next: 1, started: [], decided: [] };

function stateOf(value: unknown): ApprovalEngineState {
  return typeof value === 'object' && value !== null ? (value as ApprovalEngineState) : EMPTY;
}

/**
 * The engine: a user message (with no call held) asks for approval of `refund { request: text }`
 * under the id `ap-<n>`; a user message while a call is held changes nothing; decisions in
 * `ctx.approvals` resume it — approved: claim + commit, then the tool once; denied: a `denied:
 * <reason>` tool message; a decision for an id not held is ignored.
 */
export function approvalEngine(opts: ApprovalEngineOptions): (ctx: ApprovalTurnContext) => Promise<ApprovalTurnResult> {
  return async (ctx) => {
    let state = stateOf(ctx.state);
    const held = state.held;
    const decision = held === undefined ? undefined : ctx.approvals.find((d) => d.id === held.id);
    if (held !== undefined && decision !== undefined) return resume(ctx, opts, state, held, decision);
    if (held !== undefined) return { state, pendingApprovals: [held] };
    if (ctx.signal.kind !== 'user_message') return { state };
    const payload = ctx.signal.payload as { text?: unknown } | string;
    const request = typeof payload === 'string' ? payload : String(payload.text);
    const approval: TestPendingApproval = {
      id: `ap-${state.next}`,
      toolCallId: `call-${state.next}`,
      toolName: 'refund',
      arguments: { request },
      agentId: 'clerk',
      requestedAt: new Date(0).toISOString(),
    };
    state = { ...state, next: state.next + 1, held: approval };
    return {
      state,
      pendingApprovals: [approval],
      messages: [{ role: 'assistant', content: `may I refund ${request}?` }],
    };
  };
}

async function resume(
  ctx: ApprovalTurnContext,
  opts: ApprovalEngineOptions,
  state: ApprovalEngineState,
  held: TestPendingApproval,
  decision: { readonly approved: boolean; readonly reason?: string },
): Promise<ApprovalTurnResult> {
  const done = (content: string): ApprovalTurnResult => ({
    state: { next: state.next, started: state.started, decided: [...state.decided, held.id] },
    messages: [
      { role: 'tool', content, toolCallId: held.toolCallId },
      { role: 'assistant', content: `done: ${content}` },
    ],
    output: content,
  });
  if (!decision.approved) return done(decision.reason === undefined ? 'denied' : `denied: ${decision.reason}`);
  if (state.started.includes(held.id)) return done('outcome unknown: not retried');
  // The durable claim: once this commit is saved, the call never runs again.
  const claimed: ApprovalEngineState = { ...state, started: [...state.started, held.id] };
  await opts.beforeClaim?.();
  await ctx.commit(claimed);
  await opts.beforeTool?.();
  const result = await opts.tool(held.arguments as { request: string });
  return done(String(result));
}
