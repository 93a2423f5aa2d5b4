import {
  ConfigError,
  describeValue,
  systemClock,
  type ChatMessage,
  type ChatModel,
  type Clock,
  type McpToolSource,
  type Tool,
  type TranscriptEntry,
} from '@signalyard/core';
import { pushStream } from '@signalyard/core/internal';
import { compileCrew, type CompiledCrew } from './compiled-crew.js';
import type { CrewConfig, CrewConfigInput } from './crew-config.js';
import type { CrewEvent, CrewResponse, CrewRunOptions } from './crew-events.js';
import { runCrew } from './crew-run.js';
import type { CrewState } from './crew-state.js';
import { crewTranscript } from './crew-transcript.js';
import { isClock } from './run-input.js';
import { visibleText } from './signal-hider.js';
import { assertContent } from './signal-normalize.js';
import { resolveCrewConfig } from './resolve-crew-config.js';

const EXECUTOR_KEYS: ReadonlySet<string> = new Set(['crew', 'model', 'tools', 'clock', 'mcp']);

/**
 * Options of the {@link CrewExecutor} constructor.
 *
 * @example
 * ```ts
 * new CrewExecutor({ crew, model: { teacher: bigModel, student: smallModel, reporter: smallModel }, tools: [lookup] });
 * ```
 */
export interface CrewExecutorOptions {
  /** The crew: from `parseCrewConfig` / `loadCrewConfig`, or written in code (validated with the same schema). */
  crew: CrewConfig | CrewConfigInput;
  /** One model for every agent, or one per agent id (then every agent needs one). */
  model: ChatModel | Readonly<Record<string, ChatModel>>;
  /** The tools agents may call, matched by `Tool.name` against each agent's `tools` list. */
  tools?: readonly Tool[];
  /**
   * Where runs read the time: each `PendingApproval.requestedAt` (a run's `opts.clock` wins).
   * Default `systemClock` (`Date.now()`); tests and replays pass a clock of their own.
   *
   * @example
   * ```ts
   * const clock = { now: () => Date.parse('2026-01-01T00:00:00Z') };
   * new CrewExecutor({ crew, model, tools: [refund], clock });   // requestedAt: '2026-01-01T00:00:00.000Z'
   * ```
   */
  clock?: Clock;
  /**
   * Where agents with crew.yaml `mcp:` views get their tools: what `connectMcp` from
   * `@signalyard/mcp` returns (any {@link McpToolSource}). The views are resolved at the start of
   * every run, so a server's changed tool list reaches the next run; MCP tools are offered after
   * the agent's own tools and go through approvals like them. Required when an agent has views.
   *
   * @example
   * ```ts
   * const mcp = await connectMcp({ servers: { crm: { url: 'http://127.0.0.1:8931/mcp' } } });
   * new CrewExecutor({ crew, model, mcp });   // crew.yaml: agents: [{ id: billing, mcp: [{ server: crm, allow: ['get_*'] }] }]
   * ```
   */
  mcp?: McpToolSource;
}

/**
 * Runs a crew: agents take turns on one shared history, handing off to each other through the
 * signals in their replies, until a signal terminates the run, an agent pauses or is terminal,
 * or a limit is reached.
 *
 * Each turn (see the guide, `docs/crew.md`, for the full loop): the agent's model is called
 * with its `system_prompt` and the shared history (trimmed to `max_history_messages`, never
 * separating a tool call from its result), with `agentId` and an `abortSignal` tied to the
 * run's; tool calls are run and the same agent is called again (at most `max_tool_rounds`
 * rounds in a row); then a termination signal ends the run, else the first routing signal in
 * config order hands off to an agent or runs a parallel group, else `wait_for_signal` pauses,
 * `is_terminal` ends, and the fallback (`handoff_targets`, then the first other agent) hands
 * off. `max_handoffs` applies to every handoff, `max_rounds` to every model call.
 *
 * The executor is immutable and keeps no per-run state: one executor serves any number of
 * concurrent runs, each with its own history. Between runs, the caller keeps
 * `response.state` and passes it back as `opts.state`.
 *
 * @example
 * ```ts
 * const executor = new CrewExecutor({ crew: await loadCrewConfig('crew.yaml'), model, tools: [lookup] });
 * let state: CrewState | undefined;
 * const response = await executor.execute('Start the exam', { state });
 * state = response.state;                  // keep it for the next run
 * console.log(response.reason, response.agentId, response.content);
 * ```
 */
export class CrewExecutor {
  /** The validated crew, every default filled in. */
  readonly crew: CrewConfig;
  readonly #compiled: CompiledCrew;
  readonly #clock: Clock;

  /**
   * @param options - `crew`, `model` (one for all agents or a record by agent id) and `tools`.
   * @throws ConfigError (`CONFIG_INVALID`) listing every problem: the crew's (paths as
   * `resolveCrewConfig` gives them), or, for a valid crew, the models' and tools' (`model.student`:
   * missing or not a `ChatModel`; `tools[1].name`: malformed or duplicate;
   * `crew.agents[0].tools[0]`: a tool the executor was not given; `clock`: not a `Clock`; `mcp`: not
   * an `McpToolSource`, or missing while `crew.agents[0].mcp` has views).
   */
  constructor(options: CrewExecutorOptions) {
    if (typeof options !== 'object' || (options as unknown) === null) {
      throw new ConfigError({
        problems: [
          { path: '', message: `expected executor options { crew, model, tools? }, got ${describeValue(options)}` },
        ],
      });
    }
    const unknown = Object.keys(options).filter((k) => !EXECUTOR_KEYS.has(k));
    if (unknown.length > 0) {
      throw new ConfigError({
        problems: unknown.map((k) => ({
          path: k,
          message: `unknown option ${JSON.stringify(k)} (expected crew, model, tools, clock, mcp)`,
        })),
      });
    }
    const clock: unknown = options.clock;
    if (clock !== undefined && !isClock(clock)) {
      throw new ConfigError({
        problems: [{ path: 'clock', message: `expected a Clock { now(): number }, got ${describeValue(clock)}` }],
      });
    }
    this.crew = resolveCrewConfig(options.crew);
    this.#compiled = compileCrew(this.crew, options.model, options.tools, options.mcp);
    this.#clock = clock ?? systemClock;
  }

  /**
   * One run, as a stream of {@link CrewEvent}s: from `opts.resumeAgentId`, else
   * `opts.state.pausedAgentId`, else the entry agent, until the run ends. The run starts when
   * iteration starts.
   *
   * The stream always ends with exactly one `end` event (carrying the {@link CrewResponse} and
   * its state) or `error` event (carrying the `CrewRunError` and the state up to the failure),
   * and then finishes normally: the iterator never throws. Bad arguments end it with an `error`
   * event too (`CREW_ARGUMENT_INVALID`, `CREW_UNKNOWN_AGENT`). Stopping iteration early aborts the
   * run (the model call or tool in flight gets its `abortSignal`).
   *
   * Each model call is read as one stream (core's `streamChat`: the model's `stream`, else its
   * `generate` reply as one delta), and its text is emitted as `text_delta` events, before that
   * reply's `agent_response`, with the agent `path` (and `group` for parallel members). With
   * `hideSignals` (the default) no routing marker reaches a delta: text that might still turn out
   * to be a marker is held back until it is resolved, and the deltas of one reply concatenate to
   * {@link CrewExecutor.visibleText} of it. `opts.textDeltas: false` calls `generate` instead
   * and emits no `text_delta`.
   *
   * Tool approvals (crew.yaml `approvals:`, a tool's `needsApproval`): each call of a reply is
   * decided before it runs — denied calls are answered `denied: <reason>`, asked ones are held and
   * the run ends `awaiting_approval` with `pendingApprovals` and an `approval_requested` event. The
   * next run with the returned `state` and `opts.approvals` continues the same run (see
   * {@link CrewRunOptions.approvals}); `opts.commit` makes each approved call's claim durable
   * before the tool runs, so no call runs twice (see {@link CrewRunOptions.commit}).
   *
   * @example
   * ```ts
   * for await (const event of executor.executeStream('Start the exam', { state })) {
   *   if (event.type === 'text_delta') process.stdout.write(event.delta);   // markers hidden
   *   if (event.type === 'agent_response') console.log(`\n(${event.agentId} done)`);
   *   if (event.type === 'end') state = event.response.state;
   *   if (event.type === 'error') state = event.state;
   * }
   * ```
   */
  executeStream(input: string, opts?: CrewRunOptions): AsyncIterable<CrewEvent> {
    const compiled = this.#compiled;
    // The run's own controller is the one a reader that stops early aborts.
    const controller = new AbortController();
    const clock = this.#clock;
    return pushStream<CrewEvent>(
      (emit) => runCrew(compiled, input, opts, emit, controller, clock),
      undefined,
      controller,
    );
  }

  /**
   * One run (as {@link CrewExecutor.executeStream}, without building events; models are called
   * with `generate`), resolving with its {@link CrewResponse} — the same response a streamed run
   * with the same replies ends with.
   *
   * @throws CrewRunError (as a rejection) carrying `state`, with code `CREW_AGENT_FAILED` (a
   * model threw: its error is the `cause`), `ABORTED` (`opts.abortSignal` fired),
   * `CREW_TOOL_LOOP`, `CREW_PARALLEL_FAILED`, `CREW_UNKNOWN_AGENT` (an unknown `resumeAgentId`
   * or `state.pausedAgentId`), `CREW_APPROVAL_UNKNOWN` (a decision for an approval id the state
   * does not know; nothing applied), `CREW_COMMIT_FAILED` (`opts.commit` rejected; the tool did
   * not run) or `CREW_ARGUMENT_INVALID`.
   * @example
   * ```ts
   * const first = await executor.execute('Start the exam');
   * if (first.reason === 'paused') {
   *   const next = await executor.execute('My answer is 4', { state: first.state });   // resumes at first.pausedAgentId
   * }
   * ```
   */
  async execute(input: string, opts?: CrewRunOptions): Promise<CrewResponse> {
    const result = await runCrew(this.#compiled, input, opts, undefined, undefined, this.#clock);
    if (result.ok) return result.response;
    throw result.error;
  }

  /**
   * A reply as the user sees it: with `settings.hideSignals` (the default), `content` with every
   * span that a signal configured anywhere in the crew matches (at any level) removed together
   * with the run of whitespace right before it, then trimmed; `content` itself when `hideSignals`
   * is false. One pass: text that only becomes a marker once another is cut out of it stays.
   * What `text_delta`s of that reply concatenate to, and how `CrewResponse.visibleContent` is
   * computed — e.g. to show a saved history without its markers.
   *
   * @throws CrewArgumentError `CREW_CONTENT_INVALID` when `content` is not a string.
   * @example
   * ```ts
   * executor.visibleText('Good question. [ASK_STUDENT]');       // 'Good question.'
   * executor.visibleText('Over to you [ ask_student ] now');     // 'Over to you now'
   * ```
   */
  visibleText(content: string): string {
    assertContent(content);
    const compiled = this.#compiled;
    return compiled.settings.hideSignals ? visibleText(content, compiled.markers) : content;
  }

  /**
   * The conversation of a crew state as people saw it, for rebuilding a chat page after a reload
   * (what `crewEngine` gives `Runner.transcript`): user messages; each agent's reply as
   * {@link CrewExecutor.visibleText} shows it (replies with no visible text left out); a
   * `handoff` entry wherever the run moved from one agent to another — `via` as the crew decided
   * it: a signal (its marker, or a call to its transfer tool), a parallel group's `next_agent`,
   * or the fallback; each tool call with how it ended (`done`, `error`, `denied`, or
   * `pending_approval` with its approval id for the calls of `state.approvals.batch`, the reply
   * a run paused on). Calls to transfer tools are never shown as tools, and the crew's internal
   * messages (tool results, a parallel group's collected results) not as text.
   *
   * @param history - the conversation as the crew keeps it (`CrewState.history`).
   * @param state - the rest of the crew state (its `approvals`), when a run may be paused on a batch.
   * @throws CrewArgumentError `CREW_HISTORY_INVALID` when `history` is not a list of ChatMessages.
   * @example
   * ```ts
   * for (const entry of executor.transcript(state.history, state)) {
   *   if (entry.type === 'handoff') console.log(`(${entry.from} → ${entry.to})`);
   *   if (entry.type === 'assistant') console.log(`${entry.agentId}: ${entry.text}`);   // markers hidden
   * }
   * ```
   */
  transcript(history: readonly ChatMessage[], state?: Pick<CrewState, 'approvals'>): TranscriptEntry[] {
    return crewTranscript(this.#compiled, history, state);
  }
}
