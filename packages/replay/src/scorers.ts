import { describeValue, type RunSummary } from '@signalyard/core';
import type { Cassette } from './cassette.js';
import { canonicalJson } from './request-hash.js';
import { inputInvalid } from './errors/replay-error.js';

/** What a scorer is given: the cassette and, per replayed turn, the recorded and the new summary. */
export interface ScorerRun {
  /** The cassette replayed. */
  readonly cassette: Cassette;
  /** The turns replayed, in order. */
  readonly turns: readonly {
    /** The recorded summary. */
    readonly expected: RunSummary;
    /** The new run's summary. */
    readonly actual: RunSummary;
  }[];
  /** `evaluate`'s `abortSignal`, when it was given one: a scorer that waits (an LLM judge) stops when it fires. */
  readonly abortSignal?: AbortSignal;
}

/** A scorer's verdict on one session: a score in [0, 1], and why. */
export interface Score {
  /** The scorer's name (per-scorer means are keyed by it). */
  readonly name: string;
  /** In [0, 1]: 1 is best. */
  readonly score: number;
  /** Why, when it says. */
  readonly reason?: string;
}

/** A plain function scoring one replayed session (an LLM judge is a scorer that calls a model). */
export type Scorer = (run: ScorerRun) => Score | Promise<Score>;

/** The share of turns for which `same` holds (1 for a session with no turns replayed). */
function share(run: ScorerRun, name: string, same: (e: RunSummary, a: RunSummary) => boolean, what: string): Score {
  if (run.turns.length === 0) return { name, score: 1, reason: 'no turn replayed' };
  const off = run.turns.flatMap((t, i) => (same(t.expected, t.actual) ? [] : [i + 1]));
  const score = (run.turns.length - off.length) / run.turns.length;
  return off.length === 0 ? { name, score } : { name, score, reason: `${what} differs at turn ${off.join(', ')}` };
}

const routeOf = (s: RunSummary): string => canonicalJson([s.route, s.action]);

/** Scores the share of turns routed as recorded (the same route and action). */
export function sameRoute(): Scorer {
  return (run) => share(run, 'sameRoute', (e, a) => routeOf(e) === routeOf(a), 'the route');
}

/** Scores the share of turns with the recorded handoffs (same agents, same signals, same order). */
export function sameHandoffs(): Scorer {
  return (run) =>
    share(run, 'sameHandoffs', (e, a) => canonicalJson(e.handoffs) === canonicalJson(a.handoffs), 'the handoffs');
}

/**
 * Scores 1 when a visible reply of the new run includes `text` (a string, or a RegExp that
 * matches), else 0.
 * @throws ReplayError `REPLAY_INPUT_INVALID` for `text` that is neither a non-empty string nor a RegExp.
 */
export function replyIncludes(text: string | RegExp): Scorer {
  if (!(text instanceof RegExp) && (typeof text !== 'string' || text === ''))
    throw inputInvalid(`replyIncludes needs a non-empty string or a RegExp, got ${describeValue(text)}`);
  const name = `replyIncludes(${String(text)})`;
  const hit = (reply: string): boolean =>
    typeof text === 'string' ? reply.includes(text) : new RegExp(text.source, text.flags.replace('g', '')).test(reply);
  return (run) =>
    run.turns.some((t) => t.actual.reply !== undefined && hit(t.actual.reply))
      ? { name, score: 1 }
      : { name, score: 0, reason: `no reply includes ${String(text)}` };
}

/** A routing marker as crews write them: `[UPPER_CASE]`. */
const MARKER = /\[[A-Z][A-Z0-9_]*\]/;

/**
 * Scores the share of the new run's replies that show no routing marker (`[TO_BILLING]`-like
 * text, or what `pattern` matches): a marker the user sees is a bug.
 */
export function noMarkersVisible(pattern: RegExp = MARKER): Scorer {
  const test = new RegExp(pattern.source, pattern.flags.replace('g', ''));
  return (run) => {
    const replies = run.turns.flatMap((t, i) =>
      t.actual.reply === undefined ? [] : [{ i: i + 1, reply: t.actual.reply }],
    );
    if (replies.length === 0) return { name: 'noMarkersVisible', score: 1, reason: 'no reply' };
    const shown = replies.filter((r) => test.test(r.reply));
    const score = (replies.length - shown.length) / replies.length;
    return shown.length === 0
      ? { name: 'noMarkersVisible', score }
      : { name: 'noMarkersVisible', score, reason: `a marker is visible at turn ${shown.map((r) => r.i).join(', ')}` };
  };
}

/**
 * Scores 1 when the new run called the tool `name` exactly once over the session, else 0 (a
 * refund issued twice, or never).
 * @throws ReplayError `REPLAY_INPUT_INVALID` for an empty name.
 */
export function toolCalledOnce(name: string): Scorer {
  if (typeof name !== 'string' || name === '')
    throw inputInvalid(`toolCalledOnce needs a tool name, got ${describeValue(name)}`);
  const label = `toolCalledOnce(${name})`;
  return (run) => {
    const n = run.turns.reduce((sum, t) => sum + t.actual.toolCalls.filter((c) => c.name === name).length, 0);
    return n === 1 ? { name: label, score: 1 } : { name: label, score: 0, reason: `called ${n} times` };
  };
}
