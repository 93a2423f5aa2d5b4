import { describeValue, type ChatModel, type Tool } from '@signalyard/core';
import { CrewExecutor, type CrewConfigInput, type CrewResponse, type CrewState } from '@signalyard/crew';
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
 * events are forwarded with `ctx.emit` (no `text_delta`s: models are called with `generate`).
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
      // The crew's events without text deltas: models are called with `generate`.
      const run = executor.executeStream(text, { state, abortSignal: ctx.abortSignal, textDeltas: false });
      for await (const event of run) {
        if (event.type === 'end') response = event.response;
        else if (event.type === 'error') throw event.error;
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
