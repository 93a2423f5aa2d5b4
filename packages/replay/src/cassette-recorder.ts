import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  describeValue,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type CheckpointStore,
  type Clock,
  type Plugin,
  type PluginContext,
  type RunnerEvent,
  type SessionCause,
  type SessionCheckpointV1,
  type ToolCall,
} from '@signalyard/core';
import { errorText, isoAt, readClock, readSessionCheckpoint } from '@signalyard/core/internal';
import type { Cassette, CassetteModelCall, CassetteSignal, CassetteToolResult, CassetteTurn } from './cassette.js';
import { cassetteFileName } from './cassette-file.js';
import { inputInvalid } from './errors/replay-error.js';
import { redactDeep, type Redactor } from './redact-deep.js';
import { requestHash } from './request-hash.js';

/** Options of {@link cassetteRecorder}. */
export interface CassetteRecorderOptions {
  /** The folder the cassettes are written to (one `<session key>.json` per session; created when missing). */
  readonly dir: string;
  /** Replaces strings before anything is written (and before requests are hashed). */
  readonly redact?: Redactor;
  /** Stamps `recordedAt` (default `Date.now`). */
  readonly clock?: Clock;
}

/**
 * A plugin that records every turn as it happens (replay.md): the exact model requests (hashed)
 * and responses, the tool results, and the `RunSummary` the runner saved. The plugin alone is
 * enough: it reads each turn's end and summary off the `outcome` event (`cause`), and each model
 * request off the engine's `agent_response` / `stage_model_response` events (`request`). Two
 * optional extras: `recorder.store(store)` as the runner's store also records, for a session that
 * existed before recording started, the checkpoint to replay from (`Cassette.initial`);
 * `recorder.model(model)` hashes the requests of an engine whose events carry no `request`.
 */
export interface CassetteRecorder extends Plugin {
  /** `model` with each request hashed for the cassette (optional: crew and pipeline events carry their requests). */
  model(model: ChatModel): ChatModel;
  /** `store` with the session's checkpoint before its first recorded turn noted, as `Cassette.initial` (optional). */
  store(store: CheckpointStore): CheckpointStore;
  /** Resolves when every cassette written so far is on disk; rejects with the first write error. */
  flush(): Promise<void>;
}

interface Pending {
  signal?: CassetteSignal;
  modelCalls: CassetteModelCall[];
  toolResults: CassetteToolResult[];
  started: Set<string>;
}

interface Session {
  agentId: string;
  initial?: SessionCheckpointV1;
  turns: CassetteTurn[];
  pending: Pending;
}

const fresh = (): Pending => ({ modelCalls: [], toolResults: [], started: new Set() });

/**
 * Records cassettes on purpose: see {@link CassetteRecorder}.
 * @throws ReplayError `REPLAY_INPUT_INVALID` for options without a `dir`, or a `redact` that is
 * not a function.
 * @example
 * ```ts
 * const recorder = cassetteRecorder({ dir: 'cassettes/', redact: (s) => s.replace(/\d{16}/g, '[card]') });
 * const runner = createRunner({
 *   agents: [{ id: 'desk', engine: crewEngine(crew, { model, tools }) }],
 *   plugins: [recorder],
 *   store,
 * });
 * // … dispatch signals …
 * await runner.close(); // or await recorder.flush()
 * ```
 */
export function cassetteRecorder(options: CassetteRecorderOptions): CassetteRecorder {
  if (
    typeof options !== 'object' ||
    (options as unknown) === null ||
    typeof options.dir !== 'string' ||
    options.dir === ''
  )
    throw inputInvalid(
      `cassetteRecorder needs options { dir, redact? }, got dir ${describeValue((options as Partial<CassetteRecorderOptions> | null)?.dir)}`,
    );
  if (options.redact !== undefined && typeof options.redact !== 'function')
    throw inputInvalid(
      `cassetteRecorder redact must be a function (value, path) => string, got ${describeValue(options.redact)}`,
    );
  return new Recorder(options);
}

class Recorder implements CassetteRecorder {
  readonly name = 'cassette-recorder';
  readonly #o: CassetteRecorderOptions;
  readonly #sessions = new Map<string, Session>();
  /** Hashes of requests whose response an `agent_response` event has not claimed yet, by agent and content. */
  readonly #hashes = new Map<string, string[]>();
  #writes: Promise<void> = Promise.resolve();
  #failure: Error | undefined;
  #off: (() => void) | undefined;

  constructor(options: CassetteRecorderOptions) {
    this.#o = options;
  }

  setup(ctx: PluginContext): void {
    this.#off = ctx.on((event) => {
      this.#event(event);
    });
  }

  async dispose(): Promise<void> {
    this.#off?.();
    await this.flush();
  }

  async flush(): Promise<void> {
    await this.#writes;
    if (this.#failure !== undefined) throw this.#failure;
  }

  model(model: ChatModel): ChatModel {
    const hashes = this.#hashes;
    const redact = this.#o.redact;
    const note = (request: ChatRequest, response: ChatResponse): ChatResponse => {
      const key = `${request.agentId ?? ''}\u0000${response.content}`;
      const hash = requestHash(redactDeep(request, redact, ['request']));
      const list = hashes.get(key);
      if (list === undefined) hashes.set(key, [hash]);
      else list.push(hash);
      return response;
    };
    const wrapped: ChatModel = { generate: async (request) => note(request, await model.generate(request)) };
    if (model.stream !== undefined) {
      const stream = model.stream.bind(model);
      wrapped.stream = async function* (request) {
        for await (const part of stream(request)) {
          if (part.type === 'finish') note(request, part.response);
          yield part;
        }
      };
    }
    return wrapped;
  }

  store(store: CheckpointStore): CheckpointStore {
    const wrapped: CheckpointStore = {
      load: async (key) => {
        const checkpoint = await store.load(key);
        const known = this.#sessions.get(key);
        // The checkpoint before the first recorded turn seeds the replay.
        if (
          checkpoint !== undefined &&
          (known === undefined || (known.turns.length === 0 && known.initial === undefined))
        ) {
          const read = readSessionCheckpoint(checkpoint.data);
          if (read.ok) this.#session(key, read.data.agentId).initial = read.data;
        }
        return checkpoint;
      },
      save: (key, data, expected) => store.save(key, data, expected),
      delete: (key) => store.delete(key),
      list: (prefix) => store.list(prefix),
    };
    if (store.history !== undefined) wrapped.history = store.history.bind(store);
    if (store.loadVersion !== undefined) wrapped.loadVersion = store.loadVersion.bind(store);
    if (store.close !== undefined) wrapped.close = store.close.bind(store);
    return wrapped;
  }

  #session(key: string, agentId: string): Session {
    let s = this.#sessions.get(key);
    if (s === undefined) this.#sessions.set(key, (s = { agentId, turns: [], pending: fresh() }));
    return s;
  }

  #event(event: RunnerEvent): void {
    if (event.type === 'signal_received') {
      const s = this.#session(event.sessionKey, event.agentId);
      s.pending = { ...fresh(), signal: { kind: event.signal.kind, payload: jsonOf(event.signal.payload) } };
    } else if (event.type === 'engine_event') {
      this.#engineEvent(this.#session(event.sessionKey, event.agentId).pending, event.event);
    } else if (event.type === 'outcome' && event.cause !== undefined) {
      this.#ended(event.outcome.sessionKey, event.outcome.agentId, event.cause);
    }
  }

  #engineEvent(p: Pending, e: { type: string } & Record<string, unknown>): void {
    if (e.type === 'agent_response' && typeof e.agentId === 'string' && typeof e.content === 'string') {
      const calls = [
        ...((e.toolCalls as ToolCall[] | undefined) ?? []),
        ...((e.transferCalls as ToolCall[] | undefined) ?? []),
      ];
      this.#modelCall(
        p,
        e.agentId,
        calls.length === 0 ? { content: e.content } : { content: e.content, toolCalls: calls },
        e.request,
      );
    } else if (e.type === 'stage_model_response' && typeof e.agentId === 'string' && isResponse(e.response)) {
      // A pipeline stage's call through `ctx.model` (pipelineEngine forwards the pipeline's events).
      const { content, toolCalls } = e.response;
      this.#modelCall(
        p,
        e.agentId,
        toolCalls === undefined || toolCalls.length === 0 ? { content } : { content, toolCalls },
        e.request,
      );
    } else if (e.type === 'tool_start') {
      const id = (e.call as ToolCall | undefined)?.id;
      if (typeof id === 'string') p.started.add(id);
    } else if (e.type === 'tool_result') {
      const call = e.call as ToolCall | undefined;
      // A call refused by policy or a person never ran: it has no tool_start, and no result to replay.
      if (call === undefined || !p.started.has(call.id)) return;
      p.toolResults.push(
        e.isError === true
          ? { name: call.name, arguments: jsonOf(call.arguments), result: null, error: errorText(e.result) }
          : { name: call.name, arguments: jsonOf(call.arguments), result: jsonOf(e.result) },
      );
    }
  }

  /**
   * A model call answered for `agentId`: its response, and the hash of its request — the one the
   * event carries (crew, pipeline), else the one `model()` saw.
   */
  #modelCall(p: Pending, agentId: string, response: ChatResponse, request: unknown): void {
    const seen = this.#hashes.get(`${agentId}\u0000${response.content}`)?.shift();
    const hash = isRequest(request) ? requestHash(redactDeep(request, this.#o.redact, ['request'])) : seen;
    p.modelCalls.push({ agentId, ...(hash !== undefined && { request: { hash } }), response });
  }

  /** A signal settled after a final save (its `cause` has a summary): the session's pending turn ends. */
  #ended(key: string, agentId: string, cause: SessionCause): void {
    if (cause.signal === undefined || cause.summary === undefined) return;
    const s = this.#session(key, agentId);
    const p = s.pending;
    const turn: CassetteTurn = {
      signal: p.signal ?? { kind: cause.signal.kind, payload: cause.signal.payload ?? null },
      expected: cause.summary,
      modelCalls: p.modelCalls,
      toolResults: p.toolResults,
      at: cause.at,
    };
    // A turn that answered several user messages at once (`whenBusy` collect) is not one signal's
    // replay: kept, partial, so the replay stops there (as a store export does).
    s.turns.push((cause.merged ?? 0) > 1 ? { ...turn, partial: { reason: 'payload_missing' } } : turn);
    s.pending = fresh();
    this.#write(key, s);
  }

  #write(key: string, s: Session): void {
    const cassette: Cassette = {
      v: 1,
      sessionKey: key,
      agentId: s.agentId,
      recordedAt: isoAt(this.#o.clock === undefined ? Date.now() : readClock(this.#o.clock)),
      source: 'recorder',
      turns: s.turns,
      ...(s.initial !== undefined && { initial: s.initial }),
    };
    const text = `${JSON.stringify(redactDeep(cassette, this.#o.redact), null, 2)}\n`;
    const dir = this.#o.dir;
    this.#writes = this.#writes.then(async () => {
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, cassetteFileName(key)), text);
      } catch (error) {
        this.#failure ??= error instanceof Error ? error : new Error(errorText(error));
      }
    });
  }
}

const isRequest = (v: unknown): v is ChatRequest =>
  typeof v === 'object' && v !== null && Array.isArray((v as { messages?: unknown }).messages);

const isResponse = (v: unknown): v is ChatResponse =>
  typeof v === 'object' && v !== null && typeof (v as { content?: unknown }).content === 'string';

/** A value as JSON (what `JSON.parse(JSON.stringify(value))` gives; `null` for nothing). */
function jsonOf(value: unknown): unknown {
  try {
    const text = JSON.stringify(value) as string | undefined;
    return text === undefined ? null : (JSON.parse(text) as unknown);
  } catch {
    return String(value);
  }
}
