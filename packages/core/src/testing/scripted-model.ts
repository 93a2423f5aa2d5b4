import { AbortedError } from '../errors/aborted-error.js';
import { ScriptedModelError } from '../errors/scripted-model-error.js';
import type { ChatModel, ChatRequest, ChatResponse } from '../model.js';
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
}

/** The model {@link scriptedModel} returns: a `ChatModel` that records every request it receives. */
export interface ScriptedModel extends ChatModel {
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
 * Running out of script rejects with a `ScriptedModelError` of code `SCRIPT_EXHAUSTED` naming the
 * agent. An aborted `request.abortSignal` — before the call, during `delayMs`, or while a step
 * function is pending — rejects with `AbortedError` (`ABORTED`, the abort reason as `cause`),
 * and any timer is cleared. `calls` records every request.
 *
 * @throws ScriptedModelError `SCRIPT_INVALID` when the script or a step is malformed, or
 * `delayMs` is not a non-negative finite number.
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
 * ```
 */
export function scriptedModel(
  script: readonly ScriptStep[] | Readonly<Record<string, readonly ScriptStep[]>> | ScriptResponder,
  opts: ScriptedModelOptions = {},
): ScriptedModel {
  const delayMs: unknown = (opts as ScriptedModelOptions | undefined)?.delayMs ?? 0;
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw scriptError(
      `Invalid delayMs ${describeValue(delayMs)}: expected a non-negative finite number of milliseconds`,
    );
  }

  const next = stepSource(script);

  const wait: number = delayMs;
  const calls: ChatRequest[] = [];

  async function generate(request: ChatRequest): Promise<ChatResponse> {
    const valid = typeof request === 'object' && (request as unknown) !== null;
    calls.push(
      valid
        ? { ...request, messages: Array.isArray(request.messages) ? request.messages.slice() : request.messages }
        : request,
    );
    const abortSignal = valid ? request.abortSignal : undefined;
    const agentId = valid ? request.agentId : undefined;
    throwIfAborted(abortSignal);
    const step = next(agentId);
    if (wait > 0) await delay(wait, abortSignal);
    const reply = typeof step === 'function' ? await untilAborted(step(request), abortSignal) : step;
    throwIfAborted(abortSignal);
    if (typeof reply === 'string') return { content: reply };
    if (isResponse(reply)) return reply;
    throw new ScriptedModelError({
      code: 'SCRIPT_STEP_INVALID',
      message: `A script function for agent ${agentName(agentId)} returned ${describeValue(reply)}: expected a string or a ChatResponse ({ content, toolCalls? })`,
    });
  }

  return Object.freeze({ generate, calls });
}

function throwIfAborted(abortSignal: AbortSignal | undefined): void {
  if (abortSignal?.aborted === true) throw new AbortedError({ cause: abortSignal.reason });
}

/** Waits `ms` with `setTimeout`; rejects with `AbortedError` (timer cleared) when `abortSignal` fires first. */
function delay(ms: number, abortSignal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError({ cause: abortSignal?.reason }));
    };
    const timer = setTimeout(() => {
      abortSignal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    abortSignal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settles like `value`, or rejects with `AbortedError` as soon as `abortSignal` fires. */
function untilAborted<T>(value: T | PromiseLike<T>, abortSignal: AbortSignal | undefined): T | Promise<T> {
  if (abortSignal === undefined || !isThenable(value)) return value as T;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(new AbortedError({ cause: abortSignal.reason }));
    };
    if (abortSignal.aborted) onAbort();
    else abortSignal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(value)
      .finally(() => {
        abortSignal.removeEventListener('abort', onAbort);
      })
      .then(resolve, reject);
  });
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
