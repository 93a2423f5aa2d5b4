import { abortedError, throwIfAborted } from '../internal/abort.js';
import { untilAborted } from '../internal/abort-race.js';
import { sleep } from '../internal/timers.js';
import { ScriptedModelError } from '../errors/scripted-model-error.js';
import type { ChatModel, ChatRequest, ChatResponse, ChatStreamPart, ToolCall } from '../model.js';
import { describeValue } from '../signal.js';

/** A function that answers a request: with the reply text, or a full `ChatResponse` (tool calls, usage). */
export type ScriptResponder = (request: ChatRequest) => string | ChatResponse | Promise<string | ChatResponse>;

/** One scripted reply: its text, a full `ChatResponse`, or a function computing it from the request. */
export type ScriptStep = string | ChatResponse | ScriptResponder;

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /**
   * Milliseconds each reply waits (with `setTimeout`, so fake timers control it) before it is
   * produced. Default 0: replies resolve without a timer.
   */
  readonly delayMs?: number;
  /**
   * The longest `text-delta` `stream` yields, in UTF-16 code units: a reply's content is split
   * into deltas of at most this many, except that a surrogate pair is never split (a delta then
   * holds one more code unit). A positive integer; default 16.
   */
  readonly streamChunkChars?: number;
}

/** The model {@link scriptedModel} returns: a `ChatModel` that streams too and records every request it receives. */
export interface ScriptedModel extends ChatModel {
  /**
   * Streams the next scripted reply: its content as `text-delta`s of at most `streamChunkChars`
   * code units, one `tool-call` part per call, then `finish` with the whole response. The request
   * is recorded and the step used up when `stream` is called; the rest happens as the stream is
   * read (see {@link scriptedModel}).
   */
  stream(request: ChatRequest): AsyncIterable<ChatStreamPart>;
  /**
   * Every request received, in call order — including calls that were aborted or found the
   * script exhausted. Each is a shallow copy taken at call time (its `messages` list too), so
   * later changes to the caller's history don't rewrite it.
   */
  readonly calls: readonly ChatRequest[];
}

function scriptError(message: string): ScriptedModelError {
  return new ScriptedModelError({ code: 'SCRIPT_INVALID', message });
}

function checkStep(step: unknown, where: string): ScriptStep {
  if (typeof step === 'string' || typeof step === 'function') return step as ScriptStep;
  if (isResponse(step)) return step;
  throw scriptError(
    `Invalid script step ${describeValue(step)} at ${where}: expected a string, a ChatResponse ({ content, toolCalls? }) or a function`,
  );
}

function isResponse(value: unknown): value is ChatResponse {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as { content?: unknown; toolCalls?: unknown };
  return typeof r.content === 'string' && (r.toolCalls === undefined || Array.isArray(r.toolCalls));
}

const agentName = (agentId: string | undefined): string =>
  agentId === undefined ? '(no agentId)' : JSON.stringify(agentId);

/**
 * A `ChatModel` that plays a script, for testing crews, pipelines and plugins without a
 * provider. Public API: test your own crews with it.
 *
 * - a **list** is consumed in order, whichever agent calls;
 * - a **record** is consumed per `request.agentId` (each agent its own list);
 * - a **function** answers every request.
 *
 * A step is a reply text (`'[DONE]'` → `{ content: '[DONE]' }`), a `ChatResponse` (to script
 * tool calls), or a function of the request returning either (maybe async); a function that
 * throws makes `generate` reject with that error, as a failing provider would. A step is used
 * up when the call starts.
 *
 * It streams too: `stream(request)` plays the same script (a `generate` and a `stream` call use
 * up steps alike) as `text-delta`s of at most `streamChunkChars` (default 16) UTF-16 code units —
 * never splitting a surrogate pair, so a delta may hold one more — then one `tool-call` part per
 * call, then `finish` with the whole response. Empty content yields no `text-delta`. `delayMs`
 * applies before the first part. The request is recorded and its step used up when `stream` is
 * called; errors (an exhausted script, an abort) reject the stream's first `next()`, and an abort
 * between parts rejects the next one.
 *
 * Running out of script rejects with a `ScriptedModelError` of code `SCRIPT_EXHAUSTED` naming the
 * agent. An aborted `request.abortSignal` — before the call, during `delayMs`, or while a step
 * function is pending — rejects with `AbortedError` (`ABORTED`: the abort reason itself when it is one, else with the reason as `cause`),
 * and any timer is cleared. `calls` records every request, generated or streamed.
 *
 * @throws ScriptedModelError `SCRIPT_INVALID` when the script or a step is malformed, `delayMs`
 * is not a non-negative finite number, or `streamChunkChars` is not a positive integer.
 *
 * @example
 * ```ts
 * const model = scriptedModel({
 *   teacher: ['What is 2 + 2? [ASK_STUDENT]', 'Correct. [END_EXAM]'],
 *   student: ['4 [ANSWER]'],
 * });
 * await model.generate({ messages: [], agentId: 'teacher' });   // { content: 'What is 2 + 2? [ASK_STUDENT]' }
 * model.calls.length;                                            // 1
 *
 * const echo = scriptedModel((request) => `you said: ${request.messages.at(-1)?.content ?? ''}`);
 * const slow = scriptedModel(['a', 'b'], { delayMs: 50 });
 *
 * const chunky = scriptedModel(['Hello there'], { streamChunkChars: 4 });
 * for await (const part of chunky.stream({ messages: [] })) console.log(part);
 * // text-delta 'Hell', 'o th', 'ere', then finish { content: 'Hello there' }
 * ```
 */
export function scriptedModel(
  script: readonly ScriptStep[] | Readonly<Record<string, readonly ScriptStep[]>> | ScriptResponder,
  opts: ScriptedModelOptions = {},
): ScriptedModel {
  const { delayMs, chunkChars } = readOptions(opts);
  const next = stepSource(script);
  const calls: ChatRequest[] = [];

  /** Records `request` (a shallow copy) and returns what the call reads from it. */
  function record(request: ChatRequest): { abortSignal: AbortSignal | undefined; agentId: string | undefined } {
    const valid = typeof request === 'object' && (request as unknown) !== null;
    calls.push(
      valid
        ? { ...request, messages: Array.isArray(request.messages) ? request.messages.slice() : request.messages }
        : request,
    );
    return valid
      ? { abortSignal: request.abortSignal, agentId: request.agentId }
      : { abortSignal: undefined, agentId: undefined };
  }

  /** The reply of `step`: after `delayMs`, the step's value (a function's, awaited), checked. */
  async function reply(step: ScriptStep, request: ChatRequest, call: ReturnType<typeof record>): Promise<ChatResponse> {
    if (delayMs > 0) await sleep(delayMs, call.abortSignal);
    const value = typeof step === 'function' ? await untilAbortedOrNow(step(request), call.abortSignal) : step;
    return checkedReply(value, call);
  }

  /** A step's value as the call's reply, once the call is still wanted. */
  function checkedReply(value: unknown, call: ReturnType<typeof record>): ChatResponse {
    throwIfAborted(call.abortSignal);
    if (typeof value === 'string') return { content: value };
    if (isResponse(value)) return value;
    throw new ScriptedModelError({
      code: 'SCRIPT_STEP_INVALID',
      message: `A script function for agent ${agentName(call.agentId)} returned ${describeValue(value)}: expected a string or a ChatResponse ({ content, toolCalls? })`,
    });
  }

  /** A step function's pending value as the call's reply. */
  async function laterReply(value: PromiseLike<unknown>, call: ReturnType<typeof record>): Promise<ChatResponse> {
    return checkedReply(await untilAbortedOrNow(value, call.abortSignal), call);
  }

  // Not `async`: without `delayMs` a step that answers at once is one resolved promise (a crew
  // benchmark makes thousands of calls per millisecond on it, and each promise costs).
  function generate(request: ChatRequest): Promise<ChatResponse> {
    try {
      const call = record(request);
      throwIfAborted(call.abortSignal);
      const step = next(call.agentId);
      if (delayMs > 0) return reply(step, request, call);
      const value: unknown = typeof step === 'function' ? step(request) : step;
      return isThenable(value) ? laterReply(value, call) : Promise.resolve(checkedReply(value, call));
    } catch (error) {
      return new Promise<ChatResponse>(() => {
        throw error; // the call's failure, as a rejection
      });
    }
  }

  function stream(request: ChatRequest): AsyncIterable<ChatStreamPart> {
    const call = record(request);
    // The step is used up now, as for generate; a failure to get one waits for the first next().
    let start: { readonly step: ScriptStep } | { readonly error: unknown };
    try {
      throwIfAborted(call.abortSignal);
      start = { step: next(call.agentId) };
    } catch (error) {
      start = { error };
    }
    return streamReply(start, (step) => reply(step, request, call), chunkChars, call.abortSignal);
  }

  return Object.freeze({ generate, stream, calls });
}

function readOptions(opts: ScriptedModelOptions): { delayMs: number; chunkChars: number } {
  const o = opts as ScriptedModelOptions | undefined;
  const delayMs: unknown = o?.delayMs ?? 0;
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw scriptError(
      `Invalid delayMs ${describeValue(delayMs)}: expected a non-negative finite number of milliseconds`,
    );
  }
  const chunkChars: unknown = o?.streamChunkChars ?? 16;
  if (typeof chunkChars !== 'number' || !Number.isSafeInteger(chunkChars) || chunkChars < 1) {
    throw scriptError(
      `Invalid streamChunkChars ${describeValue(chunkChars)}: expected a positive integer number of UTF-16 code units`,
    );
  }
  return { delayMs, chunkChars };
}

/** One scripted reply as stream parts; checks the abort signal before each part. */
function streamReply(
  start: { readonly step: ScriptStep } | { readonly error: unknown },
  reply: (step: ScriptStep) => Promise<ChatResponse>,
  chunkChars: number,
  abortSignal: AbortSignal | undefined,
): AsyncGenerator<ChatStreamPart, void, undefined> {
  return new ScriptedStream(start, reply, chunkChars, abortSignal);
}

/**
 * The parts of one scripted reply, computed as they are read: the async generator it replaces
 * (the reply produced on the first `next()`, calls served in order, the abort signal checked
 * before each part) without one, each part an already-resolved result.
 */
class ScriptedStream implements AsyncGenerator<ChatStreamPart, void, undefined> {
  #start: { readonly step: ScriptStep } | { readonly error: unknown } | undefined;
  #reply: ((step: ScriptStep) => Promise<ChatResponse>) | undefined;
  readonly #chunkChars: number;
  readonly #abortSignal: AbortSignal | undefined;
  /** The reply once produced; `undefined` before, and once the stream is over. */
  #response: ChatResponse | undefined = undefined;
  /** Where the next text chunk starts; then the next tool call's index. */
  #at = 0;
  #call = 0;
  /** Settles when the reply is produced (calls made meanwhile wait for it); `undefined` otherwise. */
  #pending: Promise<unknown> | undefined = undefined;

  constructor(
    start: { readonly step: ScriptStep } | { readonly error: unknown },
    reply: (step: ScriptStep) => Promise<ChatResponse>,
    chunkChars: number,
    abortSignal: AbortSignal | undefined,
  ) {
    this.#start = start;
    this.#reply = reply;
    this.#chunkChars = chunkChars;
    this.#abortSignal = abortSignal;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ChatStreamPart, void>> {
    if (this.#pending !== undefined) return this.#after(() => this.next());
    const start = this.#start;
    if (start === undefined) return this.#part();
    this.#start = undefined;
    const reply = this.#reply as (step: ScriptStep) => Promise<ChatResponse>;
    this.#reply = undefined;
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
    if ('error' in start) return Promise.reject(start.error);
    const first = reply(start.step).then((response) => {
      this.#pending = undefined;
      this.#response = response;
      return this.#part();
    });
    const pending = first.catch(() => {
      this.#pending = undefined;
    });
    this.#pending = pending;
    return first;
  }

  return(value?: unknown): Promise<IteratorResult<ChatStreamPart, void>> {
    if (this.#pending !== undefined) return this.#after(() => this.return(value));
    this.#stop();
    return Promise.resolve({ value: value as undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<ChatStreamPart, void>> {
    if (this.#pending !== undefined) return this.#after(() => this.throw(error));
    this.#stop();
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
    return Promise.reject(error);
  }

  #after(call: () => Promise<IteratorResult<ChatStreamPart, void>>): Promise<IteratorResult<ChatStreamPart, void>> {
    const result = (this.#pending as Promise<unknown>).then(call);
    this.#pending = result.catch(ignoreError);
    return result;
  }

  /** The next part of the produced reply (`done` once `finish` has been read). */
  #part(): Promise<IteratorResult<ChatStreamPart, void>> {
    const response = this.#response;
    if (response === undefined) return Promise.resolve({ value: undefined, done: true });
    const abortSignal = this.#abortSignal;
    if (abortSignal?.aborted === true) {
      this.#stop();
      return Promise.reject(abortedError(abortSignal));
    }
    const text = response.content;
    if (this.#at < text.length) {
      const at = this.#at;
      const end = chunkEnd(text, at, this.#chunkChars);
      this.#at = end;
      return Promise.resolve({ value: { type: 'text-delta', delta: text.slice(at, end) }, done: false });
    }
    const calls = response.toolCalls ?? [];
    if (this.#call < calls.length) {
      return Promise.resolve({ value: { type: 'tool-call', call: calls[this.#call++] as ToolCall }, done: false });
    }
    this.#stop();
    return Promise.resolve({ value: { type: 'finish', response }, done: false });
  }

  #stop(): void {
    this.#start = undefined;
    this.#reply = undefined;
    this.#response = undefined;
  }
}

function ignoreError(): void {
  // the caller of the queued call sees its rejection
}

/** Where the chunk of `text` from `at` ends: at most `size` code units, never inside a surrogate pair. */
function chunkEnd(text: string, at: number, size: number): number {
  let end = Math.min(at + size, text.length);
  if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) end++;
  return end;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** Settles like `value`, or rejects as soon as `abortSignal` fires; a plain value is returned as it is (no promise hop). */
function untilAbortedOrNow<T>(value: T | PromiseLike<T>, abortSignal: AbortSignal | undefined): T | Promise<T> {
  if (abortSignal === undefined || !isThenable(value)) return value as T;
  return untilAborted(value, abortSignal);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Where the steps come from: the script function, a list in order, or a list per agent id. */
type StepSource = (agentId: string | undefined) => ScriptStep;

function stepSource(script: unknown): StepSource {
  if (typeof script === 'function') return () => script as ScriptResponder;
  if (Array.isArray(script)) return listSource(script as readonly unknown[]);
  if (typeof script === 'object' && script !== null) return perAgentSource(script as Readonly<Record<string, unknown>>);
  throw scriptError(
    `Invalid script ${describeValue(script)}: expected a list of steps, a record of lists by agent id, or a function`,
  );
}

function listSource(script: readonly unknown[]): StepSource {
  const steps = script.map((s, i) => checkStep(s, `index ${i}`));
  let cursor = 0;
  return (agentId) => {
    const step = steps[cursor];
    if (step === undefined) {
      throw new ScriptedModelError({
        code: 'SCRIPT_EXHAUSTED',
        message: `Scripted model ran out of script: call ${cursor + 1} (agent ${agentName(agentId)}) but the script has ${steps.length} step${steps.length === 1 ? '' : 's'}`,
      });
    }
    cursor++;
    return step;
  };
}

function perAgentSource(script: Readonly<Record<string, unknown>>): StepSource {
  const perAgent = new Map<string, { steps: readonly ScriptStep[]; cursor: number }>();
  for (const [agentId, list] of Object.entries(script)) {
    if (!Array.isArray(list)) {
      throw scriptError(
        `Invalid script for agent ${JSON.stringify(agentId)}: expected a list of steps, got ${describeValue(list)}`,
      );
    }
    perAgent.set(agentId, {
      steps: list.map((s: unknown, i) => checkStep(s, `${JSON.stringify(agentId)}[${i}]`)),
      cursor: 0,
    });
  }
  return (agentId) => {
    const entry = agentId === undefined ? undefined : perAgent.get(agentId);
    if (entry === undefined) {
      const known = [...perAgent.keys()].map((a) => JSON.stringify(a)).join(', ');
      throw new ScriptedModelError({
        code: 'SCRIPT_EXHAUSTED',
        message: `Scripted model has no script for agent ${agentName(agentId)} (scripted agents: ${known === '' ? 'none' : known})`,
      });
    }
    const step = entry.steps[entry.cursor];
    if (step === undefined) {
      throw new ScriptedModelError({
        code: 'SCRIPT_EXHAUSTED',
        message: `Scripted model ran out of script for agent ${agentName(agentId)}: call ${entry.cursor + 1} but its script has ${entry.steps.length} step${entry.steps.length === 1 ? '' : 's'}`,
      });
    }
    entry.cursor++;
    return step;
  };
}
