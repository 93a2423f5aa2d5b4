import {
  describeValue,
  systemClock,
  type Action,
  type OutcomeStatus,
  type Plugin,
  type SignalKind,
  type Tier,
} from '@signalyard/core';
import { isoAt, readClock } from '@signalyard/core/internal';
import { decisionRecords } from './approvals.js';
import { RunnerError } from './errors/runner-error.js';

/** One audit-log entry: one per signal a runner handled. */
export interface AuditEntry {
  /** When the outcome was reached (ISO-8601). */
  at: string;
  /** The canonical key of the session the signal was applied to, e.g. `'agent:support:main'`. */
  sessionKey: string;
  /** The id of that session's agent. */
  agentId: string;
  /** The signal's kind: `'user_message'`, `'tool_approval'`, `'custom:webhook'`, … */
  kind: SignalKind;
  /**
   * The action applied, e.g. `{ type: 'continue' }` or `{ type: 'transition', target: 'triage' }`.
   * Absent when no route matched and no runner default applied (status `unrouted`).
   */
  action?: Action;
  /**
   * The tier of the route that decided (`'strategy'`, `'agent'` or `'plugin'`). Absent when the
   * signal was unrouted or a runner default decided (e.g. `continue` for a user message no route
   * matched, `graceful_stop` for a `stop` signal).
   */
  tier?: Tier;
  /** The `name` of the route that decided. Absent when {@link AuditEntry.tier} is, or when that route has no name. */
  routeName?: string;
  /** How the signal ended: `'completed'`, `'paused'`, `'rejected'`, `'unrouted'`, `'stopped'` or `'failed'`. */
  status: OutcomeStatus;
  /**
   * A `tool_approval` signal's decisions, with who made them (`Runner.approve`'s `by`) —
   * whatever the status: a `rejected` entry records an approval a route refused.
   */
  approvals?: {
    /** The approval id. */
    id: string;
    /** The decision. */
    approved: boolean;
    /** Who decided (`approve()`'s `by`). */
    by?: string;
  }[];
}

/**
 * A reference plugin: calls `sink` with one {@link AuditEntry} per signal, when its outcome is
 * reached — the signal's kind, the action applied, the tier and route name that decided, the
 * status, and for a `tool_approval` signal its decisions with who made them (`approvals`). A sink that throws (or returns a rejected promise) is reported as a runner
 * `warning`, never breaking dispatch.
 *
 * @throws RunnerError `RUNNER_INPUT_INVALID` when `sink` is not a function.
 * @example
 * ```ts
 * const log: AuditEntry[] = [];
 * createRunner({ agents, plugins: [auditLogPlugin((entry) => log.push(entry))] });
 * ```
 */
export function auditLogPlugin(sink: (entry: AuditEntry) => void): Plugin {
  if (typeof sink !== 'function') {
    throw new RunnerError({
      code: 'RUNNER_INPUT_INVALID',
      message: `auditLogPlugin needs a sink function, got ${describeValue(sink)}`,
    });
  }
  return {
    name: 'audit-log',
    setup(ctx) {
      const clock = ctx.clock ?? systemClock;
      ctx.on((event) => {
        if (event.type !== 'outcome' || event.signal === undefined) return;
        const { outcome } = event;
        const entry: AuditEntry = {
          at: isoAt(readClock(clock)),
          sessionKey: outcome.sessionKey,
          agentId: outcome.agentId,
          kind: event.signal.kind,
          ...(outcome.action !== undefined && { action: outcome.action }),
          ...(outcome.decidedBy !== undefined && { tier: outcome.decidedBy.tier }),
          ...(outcome.decidedBy?.route.name !== undefined && { routeName: outcome.decidedBy.route.name }),
          status: outcome.status,
        };
        const approvals = decisionRecords(event.signal);
        if (approvals !== undefined) entry.approvals = approvals;
        // A sink typed to return void may still be async: never leave its rejection unhandled.
        // eslint-disable-next-line @typescript-eslint/no-confusing-void-expression -- a sink typed void may still return a promise
        const result: unknown = sink(entry);
        if (
          typeof result === 'object' &&
          result !== null &&
          typeof (result as { then?: unknown }).then === 'function'
        ) {
          (result as Promise<unknown>).then(undefined, (error: unknown) => {
            ctx.logger?.warn('audit-log sink failed', error);
          });
        }
      });
    },
  };
}
