import type { ChatModel, ChatRequest, ChatResponse, Clock, Tool, ToolContext } from '@signalyard/core';
import type { CassetteModelCall, CassetteToolResult, CassetteTurn } from './cassette.js';
import { divergence, type Divergence, type DivergenceKind, type FieldDiff } from './diff-runs.js';
import { ReplayError } from './errors/replay-error.js';
import { canonicalJson, requestHash } from './request-hash.js';

/**
 * What a replayed session's runner is given: the clock at each turn's recorded time, a model
 * that answers each agent's calls from the turn's recorded calls of that agent in order, and
 * tools that return the recorded results (the first unused one with the same name and
 * arguments, taken session-wide: a store keeps the result of a call that ran before a batch was
 * held for approval in the turn that resumed it). No network, no side effects: what the
 * cassette does not hold is a divergence, never a live call (unless `live`).
 * @internal
 */
export class ReplayTape {
  #now = 0;
  #turn = 0;
  #models = new Map<string, CassetteModelCall[]>();
  #calls = 0;
  #results: { readonly r: CassetteToolResult; used: boolean }[] = [];
  readonly #live: ReadonlySet<string>;
  /** The divergences the model and tools saw, in order. */
  readonly divergences: Divergence[] = [];
  /** How many times a tool listed in `live` really ran. */
  liveCalls = 0;

  readonly clock: Clock = { now: () => this.#now };
  readonly model: ChatModel = { generate: (request) => this.#generate(request) };

  constructor(live: readonly string[]) {
    this.#live = new Set(live);
  }

  /** Answers from `turns` (the replayable ones, in order): their tool results, session-wide. */
  load(turns: readonly CassetteTurn[]): void {
    this.#results = turns.flatMap((turn) => turn.toolResults.map((r) => ({ r, used: false })));
  }

  /** Drops turn `index`'s `model_call_not_recorded` / `tool_not_recorded` divergences. */
  forgive(index: number): void {
    for (let i = this.divergences.length - 1; i >= 0; i--) {
      const d = this.divergences[i] as Divergence;
      if (d.turn === index && (d.kind === 'model_call_not_recorded' || d.kind === 'tool_not_recorded'))
        this.divergences.splice(i, 1);
    }
  }

  /** Turn `index` (1-based) starts: the clock reads its recorded time. */
  at(turn: CassetteTurn, index: number): void {
    this.#turn = index;
    this.#calls = 0;
    this.#models = new Map();
    for (const call of turn.modelCalls) {
      const agent = call.agentId ?? '';
      const queue = this.#models.get(agent);
      if (queue === undefined) this.#models.set(agent, [call]);
      else queue.push(call);
    }
    if (turn.at !== undefined) this.#now = Date.parse(turn.at);
  }

  #diverge(kind: DivergenceKind, diff: FieldDiff): Divergence {
    const d = divergence(this.#turn, kind, diff);
    this.divergences.push(d);
    return d;
  }

  #generate(request: ChatRequest): Promise<ChatResponse> {
    const n = this.#calls++;
    const agent = request.agentId ?? '';
    const next = this.#models.get(agent)?.shift();
    if (next === undefined) {
      const waiting = [...this.#models].find(([, q]) => q.length > 0)?.[0];
      const d = this.#diverge('model_call_not_recorded', {
        path: `modelCalls[${n}].agentId`,
        expected: waiting,
        actual: request.agentId,
      });
      return Promise.reject(notRecorded(`A model call the cassette does not hold: ${d.text}`));
    }
    const hash = next.request?.hash;
    if (hash !== undefined) {
      const now = requestHash(request);
      if (now !== hash)
        this.#diverge('prompt_changed', { path: `modelCalls[${n}].request.hash`, expected: hash, actual: now });
    }
    return Promise.resolve(structuredClone(next.response));
  }

  /** `tools(list)`: the same tools with `execute` answered from the cassette. */
  tools = (list: readonly Tool[]): Tool[] =>
    list.map((tool) => ({ ...tool, execute: (args: unknown, ctx: ToolContext) => this.#execute(tool, args, ctx) }));

  async #execute(tool: Tool, args: unknown, ctx: ToolContext): Promise<unknown> {
    const wanted = canonicalJson(args);
    const hit = this.#results.find((e) => !e.used && e.r.name === tool.name && canonicalJson(e.r.arguments) === wanted);
    if (hit !== undefined) {
      hit.used = true;
      if (hit.r.error !== undefined) throw new Error(hit.r.error);
      return structuredClone(hit.r.result);
    }
    if (this.#live.has(tool.name)) {
      this.liveCalls++;
      return tool.execute(args, ctx);
    }
    const d = this.#diverge('tool_not_recorded', {
      path: 'toolCalls',
      expected: undefined,
      actual: { name: tool.name, arguments: args },
    });
    throw notRecorded(`A tool call the cassette does not hold: ${d.text}`);
  }
}

function notRecorded(message: string): ReplayError {
  return new ReplayError({ code: 'REPLAY_NOT_RECORDED', message });
}
