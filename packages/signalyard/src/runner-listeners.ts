import { describeValue, type RunnerEvent } from '@signalyard/core';
import { readClock, type EventChannel } from '@signalyard/core/internal';
import { EventTimeline } from './event-timeline.js';
import { inputError } from './outcomes.js';
import { listenerOptions } from './runner-input.js';
import type { ResolvedRunnerOptions } from './runner-options.js';

/**
 * Who listens to a runner's events (`runner.on`): the listeners subscribed with
 * `{ explainDecisions: true }` are counted (route decisions are explained while there is one),
 * and the recent-events timeline records either always (its recorder the hub's first listener)
 * or, by default, while such an inspecting listener is subscribed.
 * @internal
 */
export class RunnerListeners {
  /** The bounded log of recent events per session (absent with `timeline: false`). */
  readonly recent: EventTimeline | undefined;
  readonly #hub: EventChannel<RunnerEvent>;
  readonly #options: Pick<ResolvedRunnerOptions, 'timeline' | 'explainDecisions'>;
  /** Listeners subscribed with `{ explainDecisions: true }`. */
  #explainers = 0;
  /** Records an event in the timeline (absent with `timeline: false`). */
  readonly #record: ((event: RunnerEvent) => void) | undefined;
  /** Unsubscribes the recorder started by an inspecting listener. */
  #stopRecording: (() => void) | undefined;

  constructor(
    hub: EventChannel<RunnerEvent>,
    options: Pick<ResolvedRunnerOptions, 'timeline' | 'clock' | 'explainDecisions'>,
  ) {
    this.#hub = hub;
    this.#options = options;
    if (options.timeline.record !== 'never') {
      const recent = new EventTimeline(options.timeline.bounds);
      this.recent = recent;
      this.#record = (event) => {
        recent.record(event, readClock(options.clock));
      };
      // Always: the first listener, so an entry is recorded before any other listener sees its event.
      if (options.timeline.record === 'always') hub.on(this.#record);
    }
  }

  /** Route decisions are explained: the `explainDecisions` option, or an inspecting listener. */
  readonly explaining = (): boolean => this.#options.explainDecisions || this.#explainers > 0;

  /** See `Runner.on`. */
  on(listener: (event: RunnerEvent) => void, opts?: { explainDecisions?: boolean }): () => void {
    if (typeof listener !== 'function')
      throw inputError(`on() needs a listener function, got ${describeValue(listener)}`);
    const explain = listenerOptions(opts);
    // The first inspecting listener starts the recording (before it subscribes, so it finds its
    // events recorded); the last one leaving stops it, keeping what was recorded.
    if (explain && this.#explainers++ === 0) this.#inspecting(true);
    const off = this.#hub.on(listener);
    if (!explain) return off;
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      off();
      if (--this.#explainers === 0) this.#inspecting(false);
    };
  }

  /** Starts or stops recording the timeline while someone inspects (the default `timeline` option). */
  #inspecting(on: boolean): void {
    if (this.#record === undefined || this.#options.timeline.record !== 'inspecting') return;
    if (on) this.#stopRecording = this.#hub.on(this.#record);
    else {
      this.#stopRecording?.();
      this.#stopRecording = undefined;
    }
  }
}
