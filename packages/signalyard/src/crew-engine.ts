import { describeValue, type ChatMessage, type ChatModel, type Tool, type TranscriptEntry } from '@signalyard/core';
import { crewGraphMermaid, crewGraphOf } from '@signalyard/core/internal';
import {
  CrewExecutor,
  resolveCrewConfig,
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
  return {
    async turn(ctx: TurnContext): Promise<TurnResult> {
      const user = userMessageOf(ctx.signal);
      const text = user?.content ?? textOfPayload(ctx);
      // The session history already ends with this signal's user message; the crew adds its
      // input itself, so it gets the history before it.
      const prior = user === undefined ? ctx.history : ctx.history.slice(0, -1);
      const saved = (typeof ctx.state === 'object' && ctx.state !== null ? ctx.state : {}) as CrewEngineState;
      const state: CrewState = {
        history: [...prior],
        ...(typeof saved.pausedAgentId === 'string' && { pausedAgentId: saved.pausedAgentId }),
      };
      let response: CrewResponse | undefined;
      // Models stream only when someone reads the turn as a stream; else they are called with
      // `generate` and the crew emits no text deltas.
      const run = executor.executeStream(text, { state, abortSignal: ctx.abortSignal, textDeltas: ctx.streaming });
      for await (const event of run) {
        if (event.type === 'end') response = event.response;
        else if (event.type === 'error') throw event.error;
        else if (event.type === 'text_delta')
          ctx.emitText(event.delta, { crewAgentId: event.agentId, path: event.path });
        else ctx.emit({ ...event });
      }
      if (response === undefined)
        throw new RunnerError({ code: 'ENGINE_FAILED', message: 'The crew run ended without a response' });
      const appended = response.state.history.slice(prior.length + 1);
      const next: CrewEngineState =
        response.reason === 'paused' && response.pausedAgentId !== undefined
          ? { pausedAgentId: response.pausedAgentId }
          : {};
      return {
        output: response,
        messages: appended,
        state: next,
        status: response.reason === 'paused' ? 'paused' : 'completed',
      };
    },
    transcript: (history) => crewTranscript(history, (content) => executor.visibleText(content)),
    diagrams: () => {
      // The crew was validated by the executor above: resolving it again cannot fail.
      mermaid ??= crewGraphMermaid(crewGraphOf(resolveCrewConfig(crew)));
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
function crewTranscript(history: readonly ChatMessage[], visible: (content: string) => string): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const results = new Map<string, ChatMessage>();
  for (const m of history) if (m.role === 'tool' && m.toolCallId !== undefined) results.set(m.toolCallId, m);
  let speaker: string | undefined;
  for (const m of history) {
    if (m.role === 'user') {
      entries.push({ type: 'user', text: m.content });
      speaker = undefined;
    } else if (m.role === 'assistant') {
      const agentId = m.name ?? '';
      if (speaker !== undefined && speaker !== agentId)
        entries.push({ type: 'handoff', from: speaker, to: agentId, via: 'signal' });
      speaker = agentId;
      const text = visible(m.content);
      if (text !== '') entries.push({ type: 'assistant', agentId, text });
      for (const call of m.toolCalls ?? []) {
        const result = results.get(call.id);
        const failed = result?.content.startsWith('Error:') === true;
        entries.push({
          type: 'tool',
          call,
          status: result === undefined ? 'pending_approval' : failed ? 'error' : 'done',
          ...(result !== undefined && { result: result.content }),
        });
      }
    }
  }
  return entries;
}

function textOfPayload(ctx: TurnContext): string {
  const payload = ctx.signal.payload;
  if (typeof payload === 'string') return payload;
  throw new RunnerError({
    code: 'ENGINE_FAILED',
    message: `crewEngine needs a user message with text; got a ${ctx.signal.kind} signal with payload ${describeValue(payload)}`,
  });
}
