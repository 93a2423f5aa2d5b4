import type { RunnerEvent } from '@signalyard/core';
import { EventChannel, errorText } from '@signalyard/core/internal';

/**
 * The runner's one inspection channel: core's event channel with the runner's listener policy.
 * Events are delivered synchronously, in order, to every listener; a listener that throws is
 * reported as a `warning` event (never a warning about a warning) and never breaks dispatch.
 * @internal
 */
export function createEventHub(): EventChannel<RunnerEvent> {
  const hub: EventChannel<RunnerEvent> = new EventChannel<RunnerEvent>({
    onListenerError: (error, event) => {
      if (event.type === 'warning') return;
      hub.emit({
        type: 'warning',
        message: `A runner event listener threw on "${event.type}": ${errorText(error)}`,
        cause: error,
      });
    },
  });
  return hub;
}
