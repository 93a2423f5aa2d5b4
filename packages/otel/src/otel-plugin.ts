import { ConfigError, describeValue, type ConfigProblem, type Plugin } from '@signalyard/core';
import { trace, type Tracer } from '@opentelemetry/api';
import { packageVersion } from './package-version.js';
import { SpanRecorder } from './span-recorder.js';

/** Options of {@link otelPlugin}. */
export interface OtelPluginOptions {
  /**
   * The tracer to start spans with. Default: `trace.getTracer('@signalyard/otel', version)`, the
   * tracer of the globally registered provider (a no-op until one is registered), looked up when
   * the runner starts.
   */
  tracer?: Tracer;
  /**
   * Record message text in spans: the user's text on `signalyard.signal`, agents' replies on
   * `signalyard.crew.agent`, tool arguments and results, stage outputs and interrupt payloads, as
   * `signalyard.content` attributes. Default `false`: no message text leaves the process.
   */
  recordContent?: boolean;
}

const KNOWN_OPTIONS: ReadonlySet<string> = new Set(['tracer', 'recordContent']);

/**
 * A plugin that records OpenTelemetry spans of everything a Runner does, built only from the
 * `RunnerEvent`s it receives through `PluginContext.on`:
 *
 * - `signalyard.signal`, one per signal handled, with the attributes `signalyard.session_key`,
 *   `signalyard.agent_id`, `signalyard.signal_kind`, `signalyard.action`, `signalyard.tier`,
 *   `signalyard.route` and `signalyard.status` (action, tier and route when there was one); on
 *   `failed`, error status, `signalyard.error_code` and the exception;
 * - under it, `signalyard.turn` (an engine turn) and `signalyard.transition` (a strategy
 *   transition applied, after the turn that asked for it: `signalyard.transition.from`,
 *   `.action`, `.to`, `.guard`);
 * - under the turn, `signalyard.crew.agent` per crew agent turn (`agent_start` →
 *   `agent_response`; parallel members paired by group and agent id), with handoffs, tool calls,
 *   terminations and pauses as span events, and `signalyard.pipeline.stage` per pipeline stage
 *   (`stage_start` → `stage_end`, error status when the stage failed).
 *
 * Children are parented explicitly (`trace.setSpan(context.active(), parent)`); the plugin never
 * registers a context manager. Signals of different sessions interleave freely; a `stop` routed
 * on arrival gets its own signal span beside the one it stops. Every span started is ended:
 * children left open when a signal's outcome arrives end with it, and `dispose` (runner close)
 * ends the rest. No message text is recorded unless `recordContent` is `true`.
 *
 * One plugin instance serves one runner (give each runner its own); the plugin's name is `otel`.
 *
 * @throws ConfigError `CONFIG_INVALID` when `opts` is not an object, `tracer` is not a Tracer,
 * `recordContent` is not a boolean, or an option is unknown — every problem listed.
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import { otelPlugin } from '@signalyard/otel';
 *
 * const runner = createRunner({
 *   agents,
 *   plugins: [otelPlugin({ tracer: trace.getTracer('support-desk') })],
 * });
 * ```
 */
export function otelPlugin(opts?: OtelPluginOptions): Plugin {
  const { tracer, recordContent } = validateOptions(opts);
  const running: { recorder: SpanRecorder; unsubscribe: () => void }[] = [];
  return {
    name: 'otel',
    setup(ctx) {
      const recorder = new SpanRecorder(tracer ?? trace.getTracer('@signalyard/otel', packageVersion()), recordContent);
      running.push({ recorder, unsubscribe: ctx.on(recorder.listener) });
    },
    dispose() {
      for (const { recorder, unsubscribe } of running.splice(0)) {
        unsubscribe();
        recorder.dispose();
      }
    },
  };
}

function validateOptions(opts: unknown): { tracer: Tracer | undefined; recordContent: boolean } {
  if (opts === undefined) return { tracer: undefined, recordContent: false };
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    throw new ConfigError({
      problems: [
        { path: '', message: `expected otelPlugin options { tracer?, recordContent? }, got ${describeValue(opts)}` },
      ],
    });
  }
  const problems: ConfigProblem[] = [];
  for (const key of Object.keys(opts)) {
    if (!KNOWN_OPTIONS.has(key))
      problems.push({
        path: key,
        message: `unknown option ${JSON.stringify(key)}: expected "tracer" or "recordContent"`,
      });
  }
  const { tracer, recordContent } = opts as { tracer?: unknown; recordContent?: unknown };
  if (
    tracer !== undefined &&
    (typeof tracer !== 'object' ||
      tracer === null ||
      typeof (tracer as { startSpan?: unknown }).startSpan !== 'function')
  ) {
    problems.push({
      path: 'tracer',
      message: `expected an OpenTelemetry Tracer (an object with startSpan), got ${describeValue(tracer)}`,
    });
  }
  if (recordContent !== undefined && typeof recordContent !== 'boolean') {
    problems.push({ path: 'recordContent', message: `expected true or false, got ${describeValue(recordContent)}` });
  }
  if (problems.length > 0) throw new ConfigError({ problems });
  return { tracer: tracer as Tracer | undefined, recordContent: recordContent === true };
}
