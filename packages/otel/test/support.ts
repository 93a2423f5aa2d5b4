// Shared helpers for the otel tests (not a test file: vitest only runs `*.test.ts`).
import type { Plugin, PluginContext, RunnerEvent } from '@signalyard/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';
export { deferred, type Deferred } from '@signalyard/test-utils';

/** The order spans were started in, by span id (start times can tie at clock resolution). */
const startOrder = new Map<string, number>();

/** Counts spans started and ended, whatever the exporter keeps, and notes their start order. */
class CountingProcessor implements SpanProcessor {
  started: Span[] = [];
  ended: ReadableSpan[] = [];
  onStart(span: Span): void {
    startOrder.set(span.spanContext().spanId, startOrder.size);
    this.started.push(span);
  }
  onEnd(span: ReadableSpan): void {
    this.ended.push(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** An in-memory tracing setup: a BasicTracerProvider (not registered globally) and what it recorded. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Every span ended so far, in end order. */
  spans(): ReadableSpan[];
  /** How many spans were started and are not ended yet. */
  openCount(): number;
  startedCount(): number;
}

export function tracing(): Tracing {
  const exporter = new InMemorySpanExporter();
  const counting = new CountingProcessor();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), counting] });
  return {
    tracer: provider.getTracer('otel-test'),
    spans: () => exporter.getFinishedSpans(),
    openCount: () => counting.started.length - counting.ended.length,
    startedCount: () => counting.started.length,
  };
}

export const idOf = (span: ReadableSpan): string => span.spanContext().spanId;
export const parentIdOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** The spans whose parent is `parent` (or the roots, for `undefined`), in start order. */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan | undefined): ReadableSpan[] {
  const want = parent === undefined ? undefined : idOf(parent);
  return spans.filter((s) => parentIdOf(s) === want).sort(byStart);
}

function byStart(a: ReadableSpan, b: ReadableSpan): number {
  return (startOrder.get(idOf(a)) ?? -1) - (startOrder.get(idOf(b)) ?? -1);
}

export function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name).sort(byStart);
}

/** Renders a span tree as nested `[name, children]` pairs, children in start order. */
export type Tree = [string, Tree[]];
export function treeOf(spans: readonly ReadableSpan[], root: ReadableSpan): Tree {
  return [root.name, childrenOf(spans, root).map((c) => treeOf(spans, c))];
}

/** Every string anywhere in a span's attributes and its events' attributes. */
export function textsOf(span: ReadableSpan): string[] {
  const out: string[] = [];
  const add = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) add(x);
  };
  for (const v of Object.values(span.attributes)) add(v);
  for (const e of span.events) {
    out.push(e.name);
    for (const v of Object.values(e.attributes ?? {})) add(v);
  }
  return out;
}

/** Sets a plugin up against a hand-driven PluginContext: returns `emit`, to feed it events. */
export async function drive(plugin: Plugin): Promise<(event: RunnerEvent) => void> {
  let listener: ((event: RunnerEvent) => void) | undefined;
  const ctx: PluginContext = {
    on(l) {
      listener = l;
      return () => {
        listener = undefined;
      };
    },
    handleCustomAction() {
      // not used by the otel plugin
    },
  };
  await plugin.setup?.(ctx);
  return (event) => listener?.(event);
}
