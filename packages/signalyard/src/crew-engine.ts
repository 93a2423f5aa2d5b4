import { describeValue, type ChatModel, type McpToolSource, type Tool } from '@signalyard/core';
import {
  CrewExecutor,
  CrewRunError,
  buildCrewGraph,
  crewGraphMermaid,
  resolveCrewConfig,
  type CrewApprovalState,
  type CrewConfig,
  type CrewConfigInput,
  type CrewResponse,
  type CrewRunOptions,
  type CrewState,
} from '@signalyard/crew';
import type { Engine, TurnContext, TurnResult } from './engine.js';
import { forwardedEvent } from './forwarded-event.js';
import { userMessageOf } from './history.js';
import { keptRecords, policyRecordOf, withPolicyRecords, type PolicyRecord } from './crew-policy-record.js';
import { chronologicalHistory, waitsAfter, type CrewWait } from './crew-waits.js';
import { RunnerError } from './errors/runner-error.js';
import { interruptSignalOf } from './turn-interrupt.js';

/** Options of {@link crewEngine}. */
export interface CrewEngineOptions {
  /** One model for every agent, or one per agent id. */
  model: ChatModel | Record<string, ChatModel>;
  /** The tools agents may call (an agent's `tools` list in the crew names them). */
  tools?: readonly Tool[];
  /**
   * Where agents with crew.yaml `mcp:` views get their tools: what `connectMcp` from
   * `@signalyard/mcp` returns (any `McpToolSource`); resolved at the start of every turn.
   */
  mcp?: McpToolSource;
}

/** The engine state a crew engine keeps in the session checkpoint. */
interface CrewEngineState {
  pausedAgentId?: string;
  /** `resume_at: last_agent`: the agent the next message starts at (`CrewState.lastAgentId`). */
  lastAgentId?: string;
  /** The crew's approval bookkeeping: the id counter, recently decided ids, a held batch. */
  approvals?: CrewApprovalState;
  /** Held replies that resumed after messages arrived during the wait (for a chronological transcript). */
  waits?: readonly CrewWait[];
  /** The approvals policy's recent decisions on the main loop's tool calls (for the transcript). */
  policy?: readonly PolicyRecord[];
}

/**
 * An {@link Engine} that runs a crew per turn. Its engine state is `{ pausedAgentId?, lastAgentId?,
 * approvals?, waits?, policy? }`: with `resume_at: last_agent`, the next message starts at the agent whose reply
 * ended the last turn (`CrewState.lastAgentId`); `waits` (held replies that resumed after
 * messages arrived during the wait) and `policy` (the approvals policy's recent decisions) keep
 * the transcript chronological and saying why each tool call ran. A turn
 * runs `executor.execute(text, { state: { history, pausedAgentId }, abortSignal })` with the
 * session's history **without** the current user message (the crew appends it again as its
 * input), so the history lives once, in the session: the turn's `messages` are what the run
 * appended after that user message. `output` is the `CrewResponse`; `status` is `paused` when
 * the crew paused for a signal (`wait_for_signal`), and the next turn resumes at that agent. Crew
 * events are forwarded with `ctx.emit`. When the turn is streamed (`ctx.streaming`), models
 * stream and the crew's `text_delta`s (markers hidden) go through `ctx.emitText` with the
 * speaking agent and its path; otherwise models are called with `generate`. `transcript` is the
 * crew's (`CrewExecutor.transcript`): markers hidden, handoffs (transfer calls too) and tool
 * calls as entries; `diagrams()` draws
 * the crew as a Mermaid flowchart (as `signalyard graph` does).
 *
 * @throws ConfigError `CONFIG_INVALID` when the crew, models or tools are invalid (checked once, here).
 * @example
 * ```ts
 * const crew = await loadCrewConfig('crew.yaml');
 * const runner = createRunner({ agents: [{ id: 'support', engine: crewEngine(crew, { model }) }] });
 * ```
 */
export function crewEngine(crew: CrewConfigInput, opts: CrewEngineOptions): Engine {
  if (typeof opts !== 'object' || (opts as unknown) === null) {
    throw new RunnerError({
      code: 'RUNNER_INPUT_INVALID',
      message: `crewEngine needs options { model, tools?, mcp? }, got ${describeValue(opts)}`,
    });
  }
  const executor = new CrewExecutor({
    crew,
    model: opts.model,
    ...(opts.tools === undefined ? {} : { tools: opts.tools }),
    ...(opts.mcp === undefined ? {} : { mcp: opts.mcp }),
  });
  let mermaid: string | undefined;
  let resolved: CrewConfig | undefined;
  // The crew was validated by the executor above: resolving it again cannot fail.
  const config = (): CrewConfig => (resolved ??= resolveCrewConfig(crew));
  return {
    async turn(ctx: TurnContext): Promise<TurnResult> {
      const saved = (typeof ctx.state === 'object' && ctx.state !== null ? ctx.state : {}) as CrewEngineState;
      const { prior, text, state, heldAt } = crewInput(ctx, saved);
      // The approvals policy's decisions of this turn, kept for the transcript.
      const decided: PolicyRecord[] = [];
      let response: CrewResponse | undefined;
      const interruptSignal = interruptSignalOf(ctx);
      // Models stream only when someone reads the turn as a stream; else they are called with
      // `generate` and the crew emits no text deltas.
      const run = executor.executeStream(
        text,
        runOptions(ctx, state, interruptSignal, (claimed) =>
          // The durable claim: the session is saved with the call marked started before it runs.
          ctx.commit({
            ...engineStateOf(claimed, undefined, saved.waits, heldAt),
            ...withRecords(keptRecords(saved.policy, decided)),
          }),
        ),
      );
      for await (const event of run) {
        if (event.type === 'approval_decided') {
          const record = policyRecordOf(event);
          if (record !== undefined) decided.push(record);
        }
        if (event.type === 'end') response = event.response;
        else if (event.type === 'error') {
          // Interrupted at a safe point: what the run completed is this turn's result.
          if (interruptedAt(event.error, interruptSignal, ctx.abortSignal))
            return {
              messages: event.error.state.history.slice(prior),
              state: {
                ...engineStateOf(event.error.state, undefined, saved.waits, heldAt),
                ...withRecords(keptRecords(saved.policy, decided)),
              },
            };
          throw unwrapCommitFailure(event.error);
        } else if (event.type === 'text_delta')
          ctx.emitText(event.delta, { crewAgentId: event.agentId, path: event.path });
        else ctx.emit(forwardedEvent(event));
      }
      if (response === undefined)
        throw new RunnerError({ code: 'ENGINE_FAILED', message: 'The crew run ended without a response' });
      return endedTurn(response, prior, saved, heldAt, decided);
    },
    // The crew reads its own history: markers hidden, transfers as handoffs, held calls pending.
    transcript: (history, state) => {
      const saved = typeof state === 'object' && state !== null ? (state as CrewEngineState) : undefined;
      return withPolicyRecords(executor.transcript(chronologicalHistory(history, saved?.waits), saved), saved?.policy);
    },
    diagrams: () => {
      mermaid ??= crewGraphMermaid(buildCrewGraph(config()));
      return { crew: mermaid };
    },
  };
}

/** The turn's result once the crew run ended with `response`. */
function endedTurn(
  response: CrewResponse,
  prior: number,
  saved: CrewEngineState,
  heldAt: number | undefined,
  decided: readonly PolicyRecord[],
): TurnResult {
  const awaiting = response.reason === 'awaiting_approval';
  return {
    output: response,
    messages: response.state.history.slice(prior),
    state: {
      ...engineStateOf(
        response.state,
        response,
        waitsAfter(saved.waits, saved.approvals, response.state.approvals, prior - (heldAt ?? prior)),
        heldAt,
      ),
      ...withRecords(keptRecords(saved.policy, decided)),
    },
    status: response.reason === 'paused' || awaiting ? 'paused' : 'completed',
    reply: response.visibleContent,
    pendingApprovals: awaiting ? (response.pendingApprovals ?? []) : [],
  };
}

/** The crew run's options for one turn: its state, abort and interrupt, streaming, clock, decisions, commit and tool-call keys. */
function runOptions(
  ctx: TurnContext,
  state: CrewState,
  interruptSignal: AbortSignal | undefined,
  commit: (claimed: CrewState) => Promise<void>,
): CrewRunOptions {
  return {
    state,
    abortSignal: ctx.abortSignal,
    ...(interruptSignal !== undefined && { interruptSignal }),
    textDeltas: ctx.streaming,
    ...(ctx.clock !== undefined && { clock: ctx.clock }),
    ...(ctx.approvals.length > 0 && { approvals: ctx.approvals }),
    commit,
    idempotencyKey: ctx.idempotencyKey('tool'),
  };
}

function textOfPayload(ctx: TurnContext): string {
  const payload = ctx.signal.payload;
  if (typeof payload === 'string') return payload;
  throw new RunnerError({
    code: 'ENGINE_FAILED',
    message: `crewEngine needs a user message with text; got a ${ctx.signal.kind} signal with payload ${describeValue(payload)}`,
  });
}

/**
 * What the crew runs on: the session history before this turn's input (`prior` messages the
 * session already has), the input text, and the crew state. While a batch of tool calls is held
 * for approval, the crew ignores the input: it gets the whole history, and the completed batch is
 * appended after it (user messages that arrived meanwhile stay before the block — a tool call is
 * still never separated from its results).
 */
function crewInput(
  ctx: TurnContext,
  saved: CrewEngineState,
): { prior: number; text: string; state: CrewState; heldAt?: number } {
  const approvals = saved.approvals;
  const pausedAgentId = {
    ...(typeof saved.pausedAgentId === 'string' && { pausedAgentId: saved.pausedAgentId }),
    ...(typeof saved.lastAgentId === 'string' && { lastAgentId: saved.lastAgentId }),
  };
  if (approvals?.batch !== undefined) {
    const history = [...ctx.history];
    const state: CrewState = {
      history,
      ...pausedAgentId,
      approvals: { ...approvals, batch: { ...approvals.batch, at: history.length } },
    };
    // Where the batch was held (kept while it stays held, so the transcript still shows it there).
    return { prior: history.length, text: '', state, heldAt: Math.min(approvals.batch.at, history.length) };
  }
  const user = userMessageOf(ctx.signal);
  const text = user?.content ?? textOfPayload(ctx);
  // The session history already ends with this signal's user message; the crew adds its input
  // itself, so it gets the history before it.
  const history = user === undefined ? [...ctx.history] : ctx.history.slice(0, -1);
  const state: CrewState = { history, ...pausedAgentId, ...(approvals !== undefined && { approvals }) };
  return { prior: history.length + 1, text, state };
}

/** The engine state kept in the session for a crew state: the paused agent, the last agent, the approval bookkeeping. */
function engineStateOf(
  state: CrewState,
  response: CrewResponse | undefined,
  waits: readonly CrewWait[] | undefined,
  heldAt: number | undefined,
): CrewEngineState {
  const paused =
    response === undefined ? state.pausedAgentId : response.reason === 'paused' ? response.pausedAgentId : undefined;
  const approvals = state.approvals;
  const batch = approvals?.batch;
  return {
    ...(paused !== undefined && { pausedAgentId: paused }),
    ...(state.lastAgentId !== undefined && { lastAgentId: state.lastAgentId }),
    ...(approvals !== undefined && {
      approvals:
        batch === undefined || heldAt === undefined ? approvals : { ...approvals, batch: { ...batch, at: heldAt } },
    }),
    ...(waits !== undefined && waits.length > 0 && { waits }),
  };
}

/** `{ policy }` when there are records, else nothing. */
function withRecords(policy: readonly PolicyRecord[] | undefined): Pick<CrewEngineState, 'policy'> {
  return policy === undefined ? {} : { policy };
}

/** Whether `error` is the run ending at a safe point for the turn's interrupt (not for a stop). */
function interruptedAt(
  error: CrewRunError,
  interruptSignal: AbortSignal | undefined,
  abortSignal: AbortSignal,
): boolean {
  return error.code === 'ABORTED' && interruptSignal?.aborted === true && !abortSignal.aborted;
}

/** A claim commit the Runner refused (another writer got there first): the Runner's own error, so it reloads and re-applies. */
function unwrapCommitFailure(error: unknown): unknown {
  if (CrewRunError.isInstance(error) && error.code === 'CREW_COMMIT_FAILED' && error.cause !== undefined)
    return error.cause;
  return error;
}
