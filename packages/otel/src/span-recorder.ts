import {
  formatAction,
  type EngineEvent,
  type Outcome,
  type RunnerEvent,
  type Signal,
  type TransitionResult,
} from '@signalyard/core';
import {
  SpanStatusCode,
  context,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { userTextOf } from './content.js';
import { EngineSpans } from './engine-spans.js';
import {
  ATTR_ACTION,
  ATTR_AGENT_ID,
  ATTR_CONTENT,
  ATTR_ERROR_CODE,
  ATTR_ROUTE,
  ATTR_SESSION_KEY,
  ATTR_SIGNAL_KIND,
  ATTR_STATUS,
  ATTR_TIER,
  ATTR_TRANSITION_ACTION,
  ATTR_TRANSITION_FROM,
  ATTR_TRANSITION_GUARD,
  ATTR_TRANSITION_TO,
  SPAN_SIGNAL,
  SPAN_TRANSITION,
  SPAN_TURN,
} from './names.js';

/** One signal in flight: its `signalyard.signal` span and the children open under it. */
class SignalTrack {
  /** The next open signal of the same session, in arrival order. */
  next: SignalTrack | undefined = undefined;
  /** Whether this signal is the one being applied: turn, engine and transition events are its. */
  current = false;
  /** How many `route_decided` events it had (a conflict retry or a deferred stop routes again). */
  decisions = 0;
  /** `trace.setSpan(context.active(), span)`, made when its first child starts. */
  ctx: Context | undefined = undefined;
  turn: Span | undefined = undefined;
  engine: EngineSpans | undefined = undefined;

  constructor(
    readonly signal: Signal,
    readonly span: Span,
    /** Received while another signal of its session was being applied: a stop routed on arrival. */
    readonly arrival: boolean,
  ) {}
}

/** The open signals of one session (kept while the session is active, so the hot path writes no map). */
class SessionSlot {
  /** The first open signal; the rest follow through `next`. */
  head: SignalTrack | undefined = undefined;
}

/** Idle slots are swept once there are this many and they are half the map or more. */
const SWEEP_AT = 1024;

/**
 * Turns a Runner's event stream into spans. Signals of one session are applied one at a time, so
 * each session has at most one *current* signal (the one whose turn, engine and transition events
 * arrive, as these carry no signal) plus, now and then, a `stop` routed on arrival beside it; the
 * open signals of a session form a short list, kept per session key. `route_decided` and
 * `outcome` carry their signal and find their span by it.
 */
export class SpanRecorder {
  readonly #tracer: Tracer;
  readonly #content: boolean;
  /** Per session key, its open signals. */
  readonly #slots = new Map<string, SessionSlot>();
  /** How many slots have no open signal. */
  #idle = 0;

  constructor(tracer: Tracer, recordContent: boolean) {
    this.#tracer = tracer;
    this.#content = recordContent;
  }

  /** The `PluginContext.on` listener. */
  readonly listener = (event: RunnerEvent): void => {
    switch (event.type) {
      case 'signal_received':
        this.#received(event.sessionKey, event.agentId, event.signal);
        return;
      case 'route_decided':
        this.#decided(event.sessionKey, event.agentId, event.signal);
        return;
      case 'turn_start':
      case 'turn_end':
        if (event.type === 'turn_start') this.#turnStart(event.sessionKey);
        else this.#turnEnd(event.sessionKey, event.status);
        return;
      case 'engine_event':
        this.#engineEvent(event.sessionKey, event.event);
        return;
      case 'transition_applied':
        this.#transition(event.sessionKey, event.result);
        return;
      case 'outcome':
        this.#outcome(event.outcome, event.signal);
        return;
      default:
        // `unrouted` shows as the outcome's status; runner warnings are not about one signal.
        return;
    }
  };

  /** Ends every span still open (the runner closed with work in flight, or events went missing). */
  dispose(): void {
    for (const slot of this.#slots.values()) {
      for (let t = slot.head; t !== undefined; t = t.next) {
        endChildren(t);
        t.span.end();
      }
    }
    this.#slots.clear();
    this.#idle = 0;
  }

  // ------------------------------------------------------------------ signals

  #received(sessionKey: string, agentId: string, signal: Signal): SignalTrack {
    let slot = this.#slots.get(sessionKey);
    if (slot === undefined) {
      slot = new SessionSlot();
      this.#slots.set(sessionKey, slot);
    } else if (slot.head === undefined) {
      this.#idle--;
    }
    let current: SignalTrack | undefined;
    let tail: SignalTrack | undefined;
    for (let t = slot.head; t !== undefined; t = t.next) {
      if (t.current) current = t;
      tail = t;
    }
    const arrival = current !== undefined && signal.kind === 'stop';
    const span = this.#tracer.startSpan(SPAN_SIGNAL);
    span.setAttribute(ATTR_SESSION_KEY, sessionKey);
    span.setAttribute(ATTR_AGENT_ID, agentId);
    span.setAttribute(ATTR_SIGNAL_KIND, signal.kind);
    if (this.#content) {
      const text = userTextOf(signal);
      if (text !== undefined) span.setAttribute(ATTR_CONTENT, text);
    }
    const track = new SignalTrack(signal, span, arrival);
    if (!arrival) {
      if (current !== undefined) current.current = false;
      track.current = true;
    }
    if (tail === undefined) slot.head = track;
    else tail.next = track;
    return track;
  }

  #decided(sessionKey: string, agentId: string, signal: Signal): void {
    // Prefer, in order: a signal not routed yet (a stop routed on arrival routes at once), a
    // stop that arrived and is now applied in its turn, the current signal routed again.
    let fresh: SignalTrack | undefined;
    let deferred: SignalTrack | undefined;
    let again: SignalTrack | undefined;
    for (let t = this.#slots.get(sessionKey)?.head; t !== undefined; t = t.next) {
      if (t.signal !== signal) continue;
      if (t.decisions === 0) fresh = t;
      else if (t.arrival && !t.current) deferred ??= t;
      else again ??= t;
    }
    // A route_decided without its signal_received: the listener joined mid-signal.
    const track = fresh ?? deferred ?? again ?? this.#received(sessionKey, agentId, signal);
    track.decisions++;
    // A stop routed on arrival is not applied now (unless routed to no stop at all, when it waits
    // in the queue and routes again at its turn): it never becomes current here.
    if (track.arrival && track.decisions === 1) return;
    for (let t = this.#slots.get(sessionKey)?.head; t !== undefined; t = t.next) t.current = false;
    track.current = true;
    // Routed again after a checkpoint conflict: what the earlier attempt left open ends here.
    endChildren(track);
  }

  #currentOf(sessionKey: string): SignalTrack | undefined {
    for (let t = this.#slots.get(sessionKey)?.head; t !== undefined; t = t.next) if (t.current) return t;
    return undefined;
  }

  // ------------------------------------------------------------------ children

  #contextOf(track: SignalTrack): Context {
    return (track.ctx ??= trace.setSpan(context.active(), track.span));
  }

  #turnStart(sessionKey: string): void {
    const track = this.#currentOf(sessionKey);
    if (track === undefined) return;
    endChildren(track);
    track.turn = this.#tracer.startSpan(SPAN_TURN, undefined, this.#contextOf(track));
  }

  #turnEnd(sessionKey: string, status: string | undefined): void {
    const track = this.#currentOf(sessionKey);
    const turn = track?.turn;
    if (track === undefined || turn === undefined) return;
    track.engine?.end();
    track.engine = undefined;
    if (status !== undefined) turn.setAttribute(ATTR_STATUS, status);
    if (status === 'failed') turn.setStatus({ code: SpanStatusCode.ERROR });
    turn.end();
    track.turn = undefined;
  }

  #engineEvent(sessionKey: string, event: EngineEvent): void {
    const track = this.#currentOf(sessionKey);
    if (track === undefined) return;
    const host = track.turn ?? track.span;
    track.engine ??= new EngineSpans(
      this.#tracer,
      host === track.span ? this.#contextOf(track) : trace.setSpan(context.active(), host),
      this.#content,
    );
    track.engine.handle(event, host);
  }

  #transition(sessionKey: string, result: TransitionResult): void {
    const track = this.#currentOf(sessionKey);
    if (track === undefined) return;
    const attributes: Attributes = {};
    if (typeof result.from === 'string') attributes[ATTR_TRANSITION_FROM] = result.from;
    if (typeof result.action === 'string') attributes[ATTR_TRANSITION_ACTION] = result.action;
    if (typeof result.to === 'string') attributes[ATTR_TRANSITION_TO] = result.to;
    if (typeof result.guard === 'string') attributes[ATTR_TRANSITION_GUARD] = result.guard;
    this.#tracer.startSpan(SPAN_TRANSITION, { attributes }, this.#contextOf(track)).end();
  }

  // ------------------------------------------------------------------ outcomes

  #outcome(outcome: Outcome, signal: Signal | undefined): void {
    const sessionKey = outcome.sessionKey;
    const slot = this.#slots.get(sessionKey);
    const head = slot?.head;
    let track: SignalTrack | undefined;
    if (head !== undefined) {
      let current: SignalTrack | undefined;
      let other: SignalTrack | undefined;
      for (let t: SignalTrack | undefined = head; t !== undefined; t = t.next) {
        if (signal !== undefined && t.signal !== signal) continue;
        if (t.current) current ??= t;
        else other ??= t;
      }
      const action = outcome.action;
      if (outcome.status === 'stopped' && action === undefined) {
        // Stopped before it was applied: never the current signal (which may be the same object, dispatched twice).
        track = other;
      } else if (
        other?.arrival === true &&
        action !== undefined &&
        (action.type === 'graceful_stop' || action.type === 'force_stop')
      ) {
        track = other;
      } else {
        track = current ?? other;
      }
    }
    if (track === undefined) {
      // A signal that ended without being applied (stopped in the queue, refused at the door):
      // its span starts and ends with its outcome.
      const attributes: Attributes = { [ATTR_SESSION_KEY]: sessionKey, [ATTR_AGENT_ID]: outcome.agentId };
      if (signal !== undefined) attributes[ATTR_SIGNAL_KIND] = signal.kind;
      this.#finish(this.#tracer.startSpan(SPAN_SIGNAL, { attributes }), outcome);
      return;
    }
    this.#unlink(slot as SessionSlot, track);
    endChildren(track);
    this.#finish(track.span, outcome);
  }

  #finish(span: Span, outcome: Outcome): void {
    if (outcome.action !== undefined) span.setAttribute(ATTR_ACTION, formatAction(outcome.action));
    const decidedBy = outcome.decidedBy;
    if (decidedBy !== undefined) {
      span.setAttribute(ATTR_TIER, decidedBy.tier);
      const name = decidedBy.route.name;
      if (name !== undefined) span.setAttribute(ATTR_ROUTE, name);
    }
    span.setAttribute(ATTR_STATUS, outcome.status);
    if (outcome.status === 'failed') {
      const error = outcome.error;
      if (error === undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else {
        span.setAttribute(ATTR_ERROR_CODE, error.code);
        span.recordException(error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      }
    }
    span.end();
  }

  #unlink(slot: SessionSlot, track: SignalTrack): void {
    if (slot.head === track) {
      slot.head = track.next;
      if (slot.head === undefined && ++this.#idle >= SWEEP_AT && this.#idle * 2 >= this.#slots.size) this.#sweep();
      return;
    }
    for (let t = slot.head; t !== undefined; t = t.next) {
      if (t.next === track) {
        t.next = track.next;
        return;
      }
    }
  }

  /** Forgets the sessions with no open signal, so a long-lived runner's map stays the size of its active sessions. */
  #sweep(): void {
    for (const [key, slot] of this.#slots) if (slot.head === undefined) this.#slots.delete(key);
    this.#idle = 0;
  }
}

/** Ends a signal's open turn and engine spans. */
function endChildren(track: SignalTrack): void {
  track.engine?.end();
  track.engine = undefined;
  track.turn?.end();
  track.turn = undefined;
}
