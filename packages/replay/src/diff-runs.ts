import type { RunSummary } from '@signalyard/core';
import { canonicalJson } from './request-hash.js';
import { inputInvalid } from './errors/replay-error.js';

/**
 * What parted two runs: `summary` (a field of the turn's `RunSummary` differs), `prompt_changed`
 * (a recorder cassette's model request hashes differently: the run goes on), `model_call_not_recorded`
 * (a model call the cassette does not hold: another agent, or past the recorded calls),
 * `tool_not_recorded` (a tool call the cassette does not hold, and the tool is not `live`).
 */
export type DivergenceKind = 'summary' | 'prompt_changed' | 'model_call_not_recorded' | 'tool_not_recorded';

/** Where two runs part: the turn (1-based), the field as a path, both values, and one line saying so. */
export interface Divergence {
  /** The turn, 1-based. */
  readonly turn: number;
  /** What kind of difference it is. */
  readonly kind: DivergenceKind;
  /** The field as a path, e.g. `handoffs[1].to`, `route`, `reply`, `modelCalls[2].request`. */
  readonly path: string;
  /** The recorded value (`undefined`: the recorded run had none there). */
  readonly expected: unknown;
  /** The new run's value (`undefined`: the new run had none there). */
  readonly actual: unknown;
  /** The divergence in one line: `turn 4 › handoffs[1].to: billing → refunds`. */
  readonly text: string;
}

/** A field-level difference of two summaries: the path, both values. */
export interface FieldDiff {
  /** The field as a path, e.g. `handoffs[0].to`. */
  readonly path: string;
  /** The first summary's value there. */
  readonly expected: unknown;
  /** The second summary's value there. */
  readonly actual: unknown;
}

/** How a value is shown in a divergence's text: strings as they are, nothing as `(none)`, the rest as JSON. @internal */
function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  if (typeof value === 'string') return value;
  return canonicalJson(value);
}

/** A divergence with its one-line text. @internal */
export function divergence(turn: number, kind: DivergenceKind, diff: FieldDiff): Divergence {
  const text = `turn ${turn} › ${diff.path}: ${shown(diff.expected)} → ${shown(diff.actual)}`;
  return { turn, kind, path: diff.path, expected: diff.expected, actual: diff.actual, text };
}

const routeText = (r: RunSummary['route']): string | undefined => (r === undefined ? undefined : `${r.tier}:${r.name}`);

/** Compares two lists entry by entry, field by field; the first difference. */
function listDiff<T extends object>(
  name: string,
  a: readonly T[],
  b: readonly T[],
  fields: readonly (keyof T & string)[],
): FieldDiff | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) return { path: `${name}[${i}]`, expected: x, actual: y };
    for (const f of fields) {
      if (canonicalJson(x[f]) !== canonicalJson(y[f]))
        return { path: `${name}[${i}].${f}`, expected: x[f], actual: y[f] };
    }
  }
  return undefined;
}

/**
 * The first field where two summaries differ, in the order a diff reads them: route, action,
 * handoffs (from, to, signal), tool calls (name, arguments), approvals (tool, decision), status,
 * the visible reply, the FSM state — causes before their consequences (an approval that now
 * asks is reported as `approvals[0].decision`, not as the `paused` status it leads to). `undefined` when they agree on all of them.
 * (`toolCalls[].agentId` and an approval's `rule` are shown, not compared.)
 */
export function diffSummaries(expected: RunSummary, actual: RunSummary): FieldDiff | undefined {
  const re = routeText(expected.route);
  const ra = routeText(actual.route);
  if (re !== ra) return { path: 'route', expected: re, actual: ra };
  if (expected.action !== actual.action) return { path: 'action', expected: expected.action, actual: actual.action };
  return (
    listDiff('handoffs', expected.handoffs, actual.handoffs, ['from', 'to', 'signal']) ??
    listDiff('toolCalls', expected.toolCalls, actual.toolCalls, ['name', 'arguments']) ??
    listDiff('approvals', expected.approvals, actual.approvals, ['tool', 'decision']) ??
    (expected.status !== actual.status
      ? { path: 'status', expected: expected.status, actual: actual.status }
      : expected.reply !== actual.reply
        ? { path: 'reply', expected: expected.reply, actual: actual.reply }
        : expected.fsmState !== actual.fsmState
          ? { path: 'fsmState', expected: expected.fsmState, actual: actual.fsmState }
          : undefined)
  );
}

/** What {@link diffRuns} found: `same`, or the first divergence. */
export type RunDiff =
  | {
      /** The runs agree on every turn. */
      readonly same: true;
    }
  | {
      /** The runs part. */
      readonly same: false;
      /** Where they part first. */
      readonly divergence: Divergence;
    };

function summariesOf(run: unknown, which: string): readonly RunSummary[] {
  if (Array.isArray(run)) return run as RunSummary[];
  const turns = (run as { turns?: unknown } | null)?.turns;
  if (Array.isArray(turns))
    return turns.map((t: unknown) => {
      const turn = t as { actual?: RunSummary; expected?: RunSummary };
      return (turn.actual ?? turn.expected) as RunSummary;
    });
  throw inputInvalid(`diffRuns needs two lists of RunSummary (or cassettes / replayed sessions); ${which} is not one`);
}

/**
 * Compares two runs turn by turn: two lists of `RunSummary`, or anything with `turns` (a
 * `Cassette`: its expected summaries; a replayed session: its actual ones). The first turn and
 * field where they part, or `same`. A run with more turns than the other parts at the first
 * extra turn (path `turn`).
 * @throws ReplayError `REPLAY_INPUT_INVALID` for something that is neither.
 * @example
 * ```ts
 * const d = diffRuns(lastWeek, thisWeek);
 * if (!d.same) console.log(d.divergence.text); // turn 4 › handoffs[1].to: billing → refunds
 * ```
 */
export function diffRuns(
  a: readonly RunSummary[] | { readonly turns: readonly unknown[] },
  b: readonly RunSummary[] | { readonly turns: readonly unknown[] },
): RunDiff {
  const x = summariesOf(a, 'the first');
  const y = summariesOf(b, 'the second');
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const s = x[i];
    const t = y[i];
    if (s === undefined || t === undefined) {
      const diff = {
        path: 'turn',
        expected: s === undefined ? undefined : 'a turn',
        actual: t === undefined ? undefined : 'a turn',
      };
      return { same: false, divergence: divergence(i + 1, 'summary', diff) };
    }
    const diff = diffSummaries(s, t);
    if (diff !== undefined) return { same: false, divergence: divergence(i + 1, 'summary', diff) };
  }
  return { same: true };
}
