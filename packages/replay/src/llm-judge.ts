import { describeValue, type ChatModel, type ChatRequest, type ChatResponse } from '@signalyard/core';
import { abortedError, errorText, isAbortSignal } from '@signalyard/core/internal';
import { appendJudgeCall, readJudgeCassette } from './judge-cassette.js';
import { ReplayError, inputInvalid } from './errors/replay-error.js';
import { canonicalJson, requestHash } from './request-hash.js';
import type { Score, Scorer, ScorerRun } from './scorers.js';

/** Options of {@link llmJudge}: the model, what to judge (`criteria` or your own `prompt`), and where to record its calls. */
export interface LlmJudgeOptions {
  /** The judge's model (any `ChatModel`: an `aiSdkModel(...)`, a `scriptedModel` in tests). Called with `agentId` = the scorer's `name`. */
  readonly model: ChatModel;
  /**
   * What a good run does, in words ("the refund is confirmed and the amount stated"): the judge is
   * shown it with every replayed turn (its signal, the recorded and the new `RunSummary`). Give
   * `criteria` or `prompt`, not both.
   */
  readonly criteria?: string;
  /** Your own user message for the judge, built from the run (instead of `criteria`). The instructions asking for the JSON verdict are still sent as the system message. */
  readonly prompt?: (run: ScorerRun) => string;
  /**
   * A JSON file the judge's calls are recorded in: a request whose hash is in the file is answered
   * from it (the model is not called), any other is sent to the model and its answer added to the
   * file (created when missing, written atomically). Commit it: re-scoring is then deterministic
   * and free, and a changed criteria or run makes a new call.
   */
  readonly judgeCassette?: string;
  /** The scorer's name (its `Score.name` and the means' key; default `llmJudge`). */
  readonly name?: string;
}

/** The system message every judge request starts with. */
const INSTRUCTIONS = [
  'You judge a replayed conversation of an AI agent against criteria.',
  'For each turn you are given the signal that arrived, what the agent did when the conversation was recorded (expected) and what it does now (actual).',
  'Answer with only a JSON object, no other text: {"score": <a number from 0 to 1, 1 when the actual run fully meets the criteria>, "reason": "<one sentence>"}.',
].join('\n');

/**
 * A scorer that asks a model to judge each replayed session (replay.md Evals: "an LLM judge is a
 * scorer that calls a model"): it sends the judge instructions and the `criteria` with every
 * replayed turn — the signal, the recorded and the new `RunSummary` (or your own `prompt(run)`),
 * and reads the answer as `{ "score": 0..1, "reason": "…" }` (a JSON object, also inside a
 * Markdown code fence or surrounded by text). An answer it cannot read — no JSON object, a score
 * that is not a number in [0, 1] — scores 0 with the reason `judge answer unreadable: …`, so a
 * bad answer fails its session visibly instead of stopping the eval.
 *
 * With `judgeCassette`, calls are recorded the first time and served from the file after: the
 * key is the hash of the request (`requestHash`: the scorer's name, the messages), so edited
 * criteria or a run that changed make a new call, added to the file.
 *
 * @throws ReplayError `REPLAY_INPUT_INVALID` for options without a model, with both or neither of
 * `criteria` and `prompt`, or a `judgeCassette` / `name` that is not a non-empty string. The
 * scorer rejects with `REPLAY_JUDGE_FAILED` when the model throws or the file cannot be written,
 * `REPLAY_CASSETTE_UNREADABLE` / `REPLAY_CASSETTE_INVALID` for a judge cassette that is not one,
 * and `ABORTED` when `evaluate`'s `abortSignal` fires.
 * @example
 * ```ts
 * const judge = llmJudge({
 *   model: aiSdkModel(openai('gpt-4o-mini')),
 *   criteria: 'The customer is told whether the refund went through, politely.',
 *   judgeCassette: 'cassettes/judge.json',
 * });
 * const result = await evaluate(cassettes, { runner, scorers: [sameRoute(), judge], threshold: 0.8 });
 * ```
 */
export function llmJudge(options: LlmJudgeOptions): Scorer {
  checkOptions(options);
  const name = options.name ?? 'llmJudge';
  const { model, judgeCassette } = options;
  const build = options.prompt ?? ((run: ScorerRun) => criteriaPrompt(options.criteria as string, run));
  return async (run) => {
    const text = build(run);
    if (typeof text !== 'string')
      throw inputInvalid(
        `llmJudge ${JSON.stringify(name)}: prompt(run) must return a string, got ${describeValue(text)}`,
      );
    const request: ChatRequest = {
      agentId: name,
      messages: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: text },
      ],
    };
    const hash = requestHash(request);
    const recorded = judgeCassette === undefined ? undefined : (await readJudgeCassette(judgeCassette)).get(hash);
    let response = recorded;
    if (response === undefined) {
      response = await ask(model, request, name, run.abortSignal);
      if (judgeCassette !== undefined) await appendJudgeCall(judgeCassette, hash, response);
    }
    return verdict(name, response.content);
  };
}

function checkOptions(options: LlmJudgeOptions): void {
  if (typeof options !== 'object' || (options as unknown) === null)
    throw inputInvalid(
      `llmJudge needs options { model, criteria | prompt, judgeCassette?, name? }, got ${describeValue(options)}`,
    );
  const model = options.model as Partial<ChatModel> | null | undefined;
  if (typeof model !== 'object' || model === null || typeof model.generate !== 'function')
    throw inputInvalid(`llmJudge model must be a ChatModel { generate }, got ${describeValue(options.model)}`);
  const hasCriteria = options.criteria !== undefined;
  if (hasCriteria === (options.prompt !== undefined))
    throw inputInvalid(
      'llmJudge needs exactly one of criteria (a string) and prompt (a function), got ' +
        (hasCriteria ? 'both' : 'neither'),
    );
  if (hasCriteria && (typeof options.criteria !== 'string' || options.criteria.trim() === ''))
    throw inputInvalid(`llmJudge criteria must be a non-empty string, got ${describeValue(options.criteria)}`);
  if (!hasCriteria && typeof options.prompt !== 'function')
    throw inputInvalid(`llmJudge prompt must be a function (run) => string, got ${describeValue(options.prompt)}`);
  for (const key of ['judgeCassette', 'name'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      throw inputInvalid(`llmJudge ${key} must be a non-empty string, got ${describeValue(value)}`);
  }
}

/** The default user message: the criteria, then every replayed turn (signal, expected, actual) as canonical JSON. */
function criteriaPrompt(criteria: string, run: ScorerRun): string {
  const lines = [`Criteria: ${criteria}`, '', `Session ${run.cassette.sessionKey} (agent ${run.cassette.agentId}).`];
  if (run.turns.length === 0) lines.push('No turn was replayed.');
  run.turns.forEach((t, i) => {
    const signal = run.cassette.turns[i]?.signal;
    lines.push(
      '',
      `Turn ${i + 1}`,
      `Signal: ${signal === undefined ? 'unknown' : canonicalJson(signal)}`,
      `Expected: ${canonicalJson(t.expected)}`,
      `Actual: ${canonicalJson(t.actual)}`,
    );
  });
  return lines.join('\n');
}

async function ask(
  model: ChatModel,
  request: ChatRequest,
  name: string,
  abortSignal: AbortSignal | undefined,
): Promise<ChatResponse> {
  let response: unknown;
  try {
    response = await model.generate(isAbortSignal(abortSignal) ? { ...request, abortSignal } : request);
  } catch (error) {
    if (abortSignal?.aborted === true) throw abortedError(abortSignal);
    throw new ReplayError({
      code: 'REPLAY_JUDGE_FAILED',
      message: `llmJudge ${JSON.stringify(name)}: its model threw: ${errorText(error)}`,
      cause: error,
    });
  }
  const content = (response as { content?: unknown } | null)?.content;
  if (typeof content !== 'string')
    throw new ReplayError({
      code: 'REPLAY_JUDGE_FAILED',
      message: `llmJudge ${JSON.stringify(name)}: its model returned ${describeValue(response)}, expected a ChatResponse { content }`,
    });
  return { content };
}

/** The judge's answer as a score; an unreadable one scores 0 and says why. */
function verdict(name: string, content: string): Score {
  const unreadable = (why: string): Score => ({ name, score: 0, reason: `judge answer unreadable: ${why}` });
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end < start) return unreadable(`no JSON object in ${JSON.stringify(content.slice(0, 200))}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.slice(start, end + 1));
  } catch (error) {
    return unreadable(`not JSON (${errorText(error)})`);
  }
  const raw = (parsed as { score?: unknown } | null)?.score;
  const score = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof score !== 'number' || !(score >= 0 && score <= 1))
    return unreadable(`score ${describeValue(raw)} is not a number in [0, 1]`);
  const reason = (parsed as { reason?: unknown }).reason;
  return typeof reason === 'string' && reason !== '' ? { name, score, reason } : { name, score };
}
