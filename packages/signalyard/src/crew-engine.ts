import { describeValue, type ChatMessage, type ChatModel, type Tool, type TranscriptEntry } from '@signalyard/core';
import {
  CrewExecutor,
  CrewRunError,
  buildCrewGraph,
  crewGraphMermaid,
  resolveCrewConfig,
  signalMatches,
  type CrewApprovalState,
  type CrewConfig,
  type CrewConfigInput,
  type CrewResponse,
  type CrewState,
} from '@signalyard/crew';
import type { Engine, TurnContext, TurnResult } from './engine.js';
import { userMessageOf } from './history.js';
import { RunnerError } from './errors/runner-error.js';

/** Options of {@link crewEngine}. */
export interface CrewEngineOptions {
  /** One model for every agent, or one per agent id. */
  model: ChatModel | Record<string, ChatModel>;
  /** The tools agents may call (an agent's `tools` list in the crew names them). */
  tools?: readonly Tool[];
}

/** The engine state a crew engine keeps in the session checkpoint. */
interface CrewEngineState {
  pausedAgentId?: string;
  /** The crew's approval bookkeeping: the id counter, recently decided ids, a held batch. */
  approvals?: CrewApprovalState;
}

/**
 * An {@link Engine} that runs a crew per turn. Its engine state is `{ pausedAgentId? }`. A turn
 * runs `executor.execute(text, { state: { history, pausedAgentId }, abortSignal })` with the
 * session's history **without** the current user message (the crew appends it again as its
 * input), so the history lives once, in the session: the turn's `messages` are what the run
 * appended after that user message. `output` is the `CrewResponse`; `status` is `paused` when
 * the crew paused for a signal (`wait_for_signal`), and the next turn resumes at that agent. Crew
 * events are forwarded with `ctx.emit`. When the turn is streamed (`ctx.streaming`), models
 * stream and the crew's `text_delta`s (markers hidden) go through `ctx.emitText` with the
 * speaking agent and its path; otherwise models are called with `generate`. `transcript` shows
 * the conversation with markers hidden and handoffs and tool calls as entries; `diagrams()` draws
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
      message: `crewEngine needs options { model, tools? }, got ${describeValue(opts)}`,
    });
  }
  const executor = new CrewExecutor({
    crew,
    model: opts.model,
    ...(opts.tools === undefined ? {} : { tools: opts.tools }),
  });
  let mermaid: string | undefined;
  let resolved: CrewConfig | undefined;
  // The crew was validated by the executor above: resolving it again cannot fail.
  const config = (): CrewConfig => (resolved ??= resolveCrewConfig(crew));
  return {
    async turn(ctx: TurnContext): Promise<TurnResult> {
      const saved = (typeof ctx.state === 'object' && ctx.state !== null ? ctx.state : {}) as CrewEngineState;
      const { prior, text, state } = crewInput(ctx, saved);
      let response: CrewResponse | undefined;
      // Models stream only when someone reads the turn as a stream; else they are called with
      // `generate` and the crew emits no text deltas.
      const run = executor.executeStream(text, {
        state,
        abortSignal: ctx.abortSignal,
        textDeltas: ctx.streaming,
        ...(ctx.approvals.length > 0 && { approvals: ctx.approvals }),
        // The durable claim: the session is saved with the call marked started before it runs.
        commit: (claimed) => ctx.commit(engineStateOf(claimed)),
      });
      for await (const event of run) {
        if (event.type === 'end') response = event.response;
        else if (event.type === 'error') throw unwrapCommitFailure(event.error);
        else if (event.type === 'text_delta')
          ctx.emitText(event.delta, { crewAgentId: event.agentId, path: event.path });
        else ctx.emit({ ...event });
      }
      if (response === undefined)
        throw new RunnerError({ code: 'ENGINE_FAILED', message: 'The crew run ended without a response' });
      const awaiting = response.reason === 'awaiting_approval';
      return {
        output: response,
        messages: response.state.history.slice(prior),
        state: engineStateOf(response.state, response),
        status: response.reason === 'paused' || awaiting ? 'paused' : 'completed',
        pendingApprovals: awaiting ? (response.pendingApprovals ?? []) : [],
      };
    },
    transcript: (history, state) => {
      const entries = crewTranscript(
        history,
        (content) => executor.visibleText(content),
        (agentId, content) => groupHandoff(config(), agentId, content),
      );
      return [...entries, ...heldBatchEntries(state, (content) => executor.visibleText(content))];
    },
    diagrams: () => {
      mermaid ??= crewGraphMermaid(buildCrewGraph(config()));
      return { crew: mermaid };
    },
  };
}

/**
 * The visible conversation of a crew session: user messages; each agent's reply with its markers
 * hidden (replies with no visible text left out); a handoff wherever the speaking agent changes
 * within a turn; each tool call with how it ended (a tool message starting with `Error:` is an
 * error). The crew's internal messages (tool results, a parallel group's collected results) are
 * not shown as text.
 */
function crewTranscript(
  history: readonly ChatMessage[],
  visible: (content: string) => string,
  toGroup: (agentId: string, content: string) => GroupHandoff | undefined,
): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const results = new Map<string, ChatMessage>();
  for (const m of history) if (m.role === 'tool' && m.toolCallId !== undefined) results.set(m.toolCallId, m);
  let speaker: string | undefined;
  // Set by a reply that started a parallel group: the next message is the group's collected
  // results (left out), and the next speaker's handoff goes via the group.
  let group: GroupHandoff | undefined;
  let via: GroupHandoff | undefined;
  for (const m of history) {
    const after = group;
    group = undefined;
    if (m.role === 'user' && after !== undefined) {
      via = after;
    } else if (m.role === 'user') {
      entries.push({ type: 'user', text: m.content });
      speaker = undefined;
      via = undefined;
    } else if (m.role === 'assistant') {
      const agentId = m.name ?? '';
      if (speaker !== undefined && (via !== undefined || speaker !== agentId))
        entries.push({ type: 'handoff', from: speaker, to: agentId, via: via ?? 'signal' });
      speaker = agentId;
      via = undefined;
      if ((m.toolCalls ?? []).length === 0) group = toGroup(agentId, m.content);
      const text = visible(m.content);
      if (text !== '') entries.push({ type: 'assistant', agentId, text });
      for (const call of m.toolCalls ?? []) {
        const result = results.get(call.id);
        const status = toolStatus(result?.content);
        entries.push({
          type: 'tool',
          call,
          status,
          ...(result !== undefined && { result: toolResult(status, result.content) }),
        });
      }
    }
  }
  return entries;
}

/** How the crew moves on after a parallel group: to its `next_agent`, else by fallback. */
type GroupHandoff = 'parallel' | 'fallback';

/**
 * Whether `agentId`'s reply `content` started a parallel group, decided as the crew does
 * (a matching termination signal ends the run; else the first matching routing signal decides),
 * and how the run moved on after it.
 */
function groupHandoff(config: CrewConfig, agentId: string, content: string): GroupHandoff | undefined {
  const signals = config.routing.signals[agentId] ?? [];
  if (signals.some((s) => s.target === '' && signalMatches(s.signal, content))) return undefined;
  const route = signals.find((s) => s.target !== '' && signalMatches(s.signal, content));
  const target = route === undefined ? undefined : config.routing.parallelGroups[route.target];
  if (target === undefined) return undefined;
  return target.nextAgent === undefined ? 'fallback' : 'parallel';
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
function crewInput(ctx: TurnContext, saved: CrewEngineState): { prior: number; text: string; state: CrewState } {
  const approvals = saved.approvals;
  const pausedAgentId = typeof saved.pausedAgentId === 'string' ? { pausedAgentId: saved.pausedAgentId } : {};
  if (approvals?.batch !== undefined) {
    const history = [...ctx.history];
    const state: CrewState = {
      history,
      ...pausedAgentId,
      approvals: { ...approvals, batch: { ...approvals.batch, at: history.length } },
    };
    return { prior: history.length, text: '', state };
  }
  const user = userMessageOf(ctx.signal);
  const text = user?.content ?? textOfPayload(ctx);
  // The session history already ends with this signal's user message; the crew adds its input
  // itself, so it gets the history before it.
  const history = user === undefined ? [...ctx.history] : ctx.history.slice(0, -1);
  const state: CrewState = { history, ...pausedAgentId, ...(approvals !== undefined && { approvals }) };
  return { prior: history.length + 1, text, state };
}

/** The engine state kept in the session for a crew state: the paused agent and the approval bookkeeping. */
function engineStateOf(state: CrewState, response?: CrewResponse): CrewEngineState {
  const paused =
    response === undefined ? state.pausedAgentId : response.reason === 'paused' ? response.pausedAgentId : undefined;
  return {
    ...(paused !== undefined && { pausedAgentId: paused }),
    ...(state.approvals !== undefined && { approvals: state.approvals }),
  };
}

/** A claim commit the Runner refused (another writer got there first): the Runner's own error, so it reloads and re-applies. */
function unwrapCommitFailure(error: unknown): unknown {
  if (CrewRunError.isInstance(error) && error.code === 'CREW_COMMIT_FAILED' && error.cause !== undefined)
    return error.cause;
  return error;
}

/** How a tool call ended, from its result message's text (`undefined`: no result yet). */
function toolStatus(content: string | undefined): 'done' | 'error' | 'denied' | 'pending_approval' {
  if (content === undefined) return 'pending_approval';
  if (content === 'denied' || content.startsWith('denied: ')) return 'denied';
  return content.startsWith('Error:') || content.startsWith('outcome unknown') ? 'error' : 'done';
}

/**
 * What a tool returned, from its result message's text: the crew sends an object or array result
 * to the model as JSON, so a `done` call's JSON object or array text is parsed back — a reloaded
 * transcript then shows the same value the live stream showed. Any other text (a string result,
 * an error, a denial) stays as it is.
 */
function toolResult(status: string, content: string): unknown {
  if (status !== 'done' || !(content.startsWith('{') || content.startsWith('['))) return content;
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return content; // a string result that only looks like JSON
  }
}

/**
 * The reply a crew paused on for approval (held in its state, not yet in the history): its text,
 * and each call — answered, or pending with its approval id.
 */
function heldBatchEntries(state: unknown, visible: (content: string) => string): TranscriptEntry[] {
  const batch = (state as CrewEngineState | undefined)?.approvals?.batch;
  if (typeof batch !== 'object' || (batch as unknown) === null) return [];
  const entries: TranscriptEntry[] = [];
  const text = visible(batch.message.content);
  if (text !== '') entries.push({ type: 'assistant', agentId: batch.agentId, text });
  batch.message.toolCalls?.forEach((call, i) => {
    const held = batch.calls[i];
    const answered = held?.status === 'done' ? held.content : undefined;
    const status =
      held?.status === 'done' ? (held.isError === true ? toolStatus(answered) : 'done') : 'pending_approval';
    entries.push({
      type: 'tool',
      call,
      status,
      ...(answered !== undefined && { result: toolResult(status, answered) }),
      ...(held?.approval !== undefined && held.status === 'held' && { approvalId: held.approval.id }),
    });
  });
  return entries;
}
