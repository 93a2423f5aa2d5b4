import { Action, type ConsideredRoute, type RouteContext, type RunnerEvent, type Signal } from '@signalyard/core';
import type { EventChannel } from '@signalyard/core/internal';
import type { ComposedRouter, RouteMatch } from '@signalyard/router';
import { NO_PENDING_APPROVAL, decidesNothingPending } from './approval-checks.js';
import type { Job, LiveSession, LoadedState } from './live-session.js';

/** A routing decision with the router's `explain()` list. @internal */
interface ExplainedDecision {
  /** The winning route, as `router.match()` would return it; `undefined` when unrouted. */
  readonly match: RouteMatch | undefined;
  /** Every route of the signal's kind looked at, with why it did or did not win. */
  readonly considered: readonly ConsideredRoute[];
}

/** What {@link decide} works with. @internal */
export interface DecideDeps {
  readonly hub: EventChannel<RunnerEvent>;
  /** Whether route decisions carry the router's `explain()` list now. */
  readonly explaining: () => boolean;
}

/**
 * A signal's route decision: the action (a route's, else the runner default; `undefined` for an
 * unrouted signal with no default) and the route that decided it — or the error a route threw.
 * @internal
 */
export type Decision =
  | { readonly ok: true; readonly action: Action | undefined; readonly match: RouteMatch | undefined }
  | { readonly ok: false; readonly error: unknown };

/**
 * Routes the job's signal once (`explain()` while explaining is on, else `match()`), falls back to
 * the runner default ({@link defaultAction}) and reports the decision: `route_decided` (and
 * `routed` to the job's stream). A route that throws is reported as `route_decided` with no
 * action, and returned as `{ ok: false }`. The single-signal applier, the batch applier and the
 * stop routed on arrival all decide here. `loaded` is `undefined` for a session not loaded (no
 * route is looked at; the default applies).
 * @internal
 */
export function decide(d: DecideDeps, session: LiveSession, job: Job, loaded: LoadedState | undefined): Decision {
  const { signal } = job;
  let match: RouteMatch | undefined;
  let explained: ExplainedDecision | undefined;
  if (loaded !== undefined) {
    try {
      explained = d.explaining() ? routeExplained(loaded.router, signal, session.ctx) : undefined;
      match = explained === undefined ? loaded.router.match(signal, session.ctx) : explained.match;
    } catch (error) {
      d.hub.emit({ type: 'route_decided', ...session.ctx, signal, action: undefined });
      return { ok: false, error };
    }
  }
  const action = match?.action ?? defaultAction(signal, loaded);
  emitDecision(d.hub, session, job, action, match, explained?.considered);
  return { ok: true, action, match };
}

/**
 * Routes `signal` once with `router.explain()`, which decides exactly as `router.match()` does
 * and records every route it looked at on the way: the decision and its explanation from one
 * routing pass. Used only while explaining is on; otherwise the runner calls `match()`, which
 * allocates nothing.
 * @throws what `router.match()` throws (a predicate that decides throwing).
 * @internal
 */
function routeExplained(router: ComposedRouter, signal: Signal, ctx: RouteContext): ExplainedDecision {
  const decision = router.explain(signal, ctx);
  const { action, tier, route } = decision;
  return {
    match: action === undefined || tier === undefined || route === undefined ? undefined : { action, tier, route },
    considered: decision.considered,
  };
}

const AWAITING_APPROVAL = Action.reject('awaiting_approval');

/** The runner default for an unrouted `user_message`: continue, or `reject('awaiting_approval')` while approvals are pending. @internal */
export function userMessageDefault(loaded: LoadedState | undefined): Action {
  return loaded !== undefined && loaded.pendingApprovals.length > 0 ? AWAITING_APPROVAL : Action.Continue;
}

/**
 * Runner defaults for unrouted signals: `user_message` → continue (`reject('awaiting_approval')`
 * while approvals are pending), `tool_approval` → continue when a decision names a pending approval, else
 * `reject('no_pending_approval')`, `stop` → graceful_stop.
 */
function defaultAction(signal: Signal, loaded: LoadedState | undefined): Action | undefined {
  switch (signal.kind) {
    case 'user_message':
      return userMessageDefault(loaded);
    case 'tool_approval':
      return decidesNothingPending(signal, loaded?.pendingApprovals ?? []) ? NO_PENDING_APPROVAL : Action.Continue;
    case 'stop':
      return Action.GracefulStop;
    default:
      return undefined;
  }
}

/**
 * Emits `route_decided` (when anyone listens; with `considered` when the decision was explained),
 * and `routed` to the job's stream. @internal
 */
function emitDecision(
  hub: EventChannel<RunnerEvent>,
  session: LiveSession,
  job: Job,
  action: Action | undefined,
  match: RouteMatch | undefined,
  considered: readonly ConsideredRoute[] | undefined,
): void {
  job.sink?.({
    type: 'routed',
    ...session.ctx,
    action,
    ...(match !== undefined && { tier: match.tier }),
    ...(match?.route.name !== undefined && { routeName: match.route.name }),
  });
  if (!hub.hasListeners) return;
  // Built field by field (no spreads): one per signal whenever a plugin listens.
  const event: { -readonly [K in keyof RouteDecided]: RouteDecided[K] } = {
    type: 'route_decided',
    sessionKey: session.key,
    agentId: session.agent.id,
    signal: job.signal,
    action,
  };
  if (match !== undefined) event.tier = match.tier;
  if (match?.route.name !== undefined) event.routeName = match.route.name;
  if (considered !== undefined) event.considered = considered;
  hub.emit(event);
}

type RouteDecided = Extract<RunnerEvent, { type: 'route_decided' }>;
