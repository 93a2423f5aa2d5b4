import { describeValue } from '@signalyard/core';
import { abortedError, errorText, throwIfAborted, untilAborted } from '@signalyard/core/internal';
import type { Cassette } from './cassette.js';
import { ReplayError, inputInvalid } from './errors/replay-error.js';
import { replay, type ReplayOptions, type ReplayReport, type ReplayStatus } from './replay.js';
import type { Score, Scorer } from './scorers.js';

/** Options of {@link evaluate}: the replay's, plus the scorers and the threshold. */
export interface EvaluateOptions extends ReplayOptions {
  /** The scorers, run on every replayed session. */
  readonly scorers: readonly Scorer[];
  /** The lowest score a session may get from each scorer, and the lowest mean (default 1). */
  readonly threshold?: number;
}

/** One session's scores. */
export interface EvaluatedSession {
  /** The session. */
  readonly sessionKey: string;
  /** How its replay went. */
  readonly status: ReplayStatus;
  /** Each scorer's verdict, in the scorers' order. */
  readonly scores: readonly Score[];
}

/** What {@link evaluate} returns. */
export interface EvaluateResult {
  /** Each scorer's mean over the sessions, in the scorers' order. */
  readonly means: readonly {
    /** The scorer's name. */
    readonly name: string;
    /** Its mean score over the sessions. */
    readonly mean: number;
  }[];
  /** Every session with its scores. */
  readonly sessions: readonly EvaluatedSession[];
  /** The sessions with a score below the threshold, or whose replay failed. */
  readonly failing: readonly EvaluatedSession[];
  /** The threshold applied. */
  readonly threshold: number;
  /** True when every mean is at least the threshold and no replay failed. */
  readonly passed: boolean;
  /** The replay the scores were computed on. */
  readonly report: ReplayReport;
}

/**
 * Replays the cassettes (as {@link replay} does) and scores every session with each scorer
 * (plain functions: `sameRoute()`, `replyIncludes('refund')`, your own). Returns per-scorer
 * means, every session's scores and the failing sessions (a score below `threshold`, or a replay
 * that failed); `passed` says whether every mean reached the threshold.
 *
 * @throws ReplayError `REPLAY_INPUT_INVALID` for no scorers, a threshold outside [0, 1], or a
 * scorer whose result is not `{ name, score in [0, 1] }` (naming the scorer); AbortedError
 * `ABORTED` when `abortSignal` fires (during the replay or the scoring: scorers get it as
 * `run.abortSignal`).
 * @example
 * ```ts
 * const result = await evaluate(cassettes, { runner, scorers: [sameRoute(), noMarkersVisible()], threshold: 0.9 });
 * if (!result.passed) process.exitCode = 1;
 * ```
 */
export async function evaluate(cassettes: readonly Cassette[], options: EvaluateOptions): Promise<EvaluateResult> {
  const threshold = options.threshold ?? 1;
  const list: unknown = options.scorers;
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== 'function'))
    throw inputInvalid(`evaluate needs scorers: a non-empty list of functions, got ${describeValue(list)}`);
  const scorers = list as readonly Scorer[];
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1))
    throw inputInvalid(`evaluate threshold must be a number in [0, 1], got ${describeValue(threshold)}`);
  const report = await replay(cassettes, options);
  const sessions: EvaluatedSession[] = [];
  for (const [i, s] of report.sessions.entries()) {
    const cassette = cassettes[i] as Cassette;
    const turns = s.turns.flatMap((t) => (t.actual === undefined ? [] : [{ expected: t.expected, actual: t.actual }]));
    const scores: Score[] = [];
    const { abortSignal } = options;
    for (const [n, scorer] of scorers.entries()) {
      throwIfAborted(abortSignal);
      const run = abortSignal === undefined ? { cassette, turns } : { cassette, turns, abortSignal };
      scores.push(checked(await untilAborted(runScorer(scorer, n, run), abortSignal), n));
    }
    sessions.push({ sessionKey: s.sessionKey, status: s.status, scores });
  }
  const means = scorers.map((_, n) => {
    const name = sessions[0]?.scores[n]?.name ?? `scorer ${n}`;
    const total = sessions.reduce((sum, s) => sum + (s.scores[n] as Score).score, 0);
    return { name, mean: sessions.length === 0 ? 1 : total / sessions.length };
  });
  const failing = sessions.filter((s) => s.status === 'failed' || s.scores.some((x) => x.score < threshold));
  const passed = report.failed === 0 && means.every((m) => m.mean >= threshold);
  return { means, sessions, failing, threshold, passed, report };
}

async function runScorer(scorer: Scorer, n: number, run: Parameters<Scorer>[0]): Promise<unknown> {
  try {
    return await scorer(run);
  } catch (error) {
    if (run.abortSignal?.aborted === true) throw abortedError(run.abortSignal);
    // An LLM judge's own failure (its model, its file) keeps its code.
    if (ReplayError.isInstance(error) && error.code !== 'REPLAY_NOT_RECORDED') throw error;
    throw inputInvalid(
      `Scorer ${n} (${scorer.name || 'anonymous'}) threw on session ${JSON.stringify(run.cassette.sessionKey)}: ${errorText(error)}`,
    );
  }
}

function checked(result: unknown, n: number): Score {
  const r = result as Partial<Score> | null;
  if (
    typeof r !== 'object' ||
    r === null ||
    typeof r.name !== 'string' ||
    typeof r.score !== 'number' ||
    !(r.score >= 0 && r.score <= 1)
  )
    throw inputInvalid(
      `Scorer ${n} returned ${describeValue(result)}, expected { name: string, score: number in [0, 1], reason? }`,
    );
  return r as Score;
}
