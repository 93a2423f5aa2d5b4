import { readFileSync } from 'node:fs';
import { ConfigError, SignalKind, signal, type Plugin } from '@signalyard/core';
import { otelPlugin, type OtelPluginOptions } from '@signalyard/otel';
import { trace, type Tracer } from '@opentelemetry/api';
import { createRunner } from 'signalyard';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { named, tracing } from './support.js';

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('otelPlugin options', () => {
  it('takes no options, an empty object, or a tracer and recordContent', () => {
    const { tracer } = tracing();
    expect(otelPlugin().name).toBe('otel');
    expect(otelPlugin({}).name).toBe('otel');
    expect(otelPlugin({ tracer, recordContent: true }).name).toBe('otel');
    expect('signalRoutes' in otelPlugin({ recordContent: false })).toBe(false);
  });

  it.each([null, 'tracer', 42, [], true])('refuses options %j that are not an object with CONFIG_INVALID', (bad) => {
    const error = configErrorOf(() => otelPlugin(bad as never));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]?.path).toBe('');
    expect(error.message).toContain('expected otelPlugin options');
  });

  it('lists every problem at once: a tracer without startSpan, a non-boolean recordContent, an unknown key', () => {
    const error = configErrorOf(() =>
      otelPlugin({ tracer: { getTracer: () => undefined }, recordContent: 'yes', recordContents: true } as never),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems.map((p) => p.path)).toEqual(['recordContents', 'tracer', 'recordContent']);
    expect(error.problems[0]?.message).toContain('unknown option "recordContents"');
    expect(error.problems[1]?.message).toContain('expected an OpenTelemetry Tracer');
    expect(error.problems[2]?.message).toContain('"yes"');
  });

  it.each([null, 7, 'tracer'])('refuses a tracer %j', (tracer) => {
    expect(configErrorOf(() => otelPlugin({ tracer: tracer as never })).problems.map((p) => p.path)).toEqual([
      'tracer',
    ]);
  });
});

describe('the default tracer', () => {
  it("is trace.getTracer('@signalyard/otel', <package version>), looked up when the runner starts", async () => {
    const t = tracing();
    const getTracer = vi.spyOn(trace, 'getTracer').mockImplementation(() => t.tracer);
    const plugin = otelPlugin();
    expect(getTracer).not.toHaveBeenCalled();
    const runner = createRunner({ agents: [{ id: 'main', engine: () => Promise.resolve({}) }], plugins: [plugin] });
    await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'));
    await runner.close();
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(getTracer).toHaveBeenCalledWith('@signalyard/otel', pkg.version);
    expect(named(t.spans(), 'signalyard.signal')).toHaveLength(1);
  });

  it('without a registered provider records nothing and never gets in the way', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: () => Promise.resolve({}) }],
      plugins: [otelPlugin()],
    });
    const warnings: string[] = [];
    runner.on((e) => {
      if (e.type === 'warning') warnings.push(e.message);
    });
    expect((await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'))).status).toBe('completed');
    await runner.close();
    expect(warnings).toEqual([]);
  });
});

describe('types', () => {
  it('otelPlugin returns a Plugin and takes optional options', () => {
    expectTypeOf(otelPlugin).returns.toEqualTypeOf<Plugin>();
    expectTypeOf(otelPlugin).parameter(0).toEqualTypeOf<OtelPluginOptions | undefined>();
    expectTypeOf<OtelPluginOptions['tracer']>().toEqualTypeOf<Tracer | undefined>();
    expectTypeOf<OtelPluginOptions['recordContent']>().toEqualTypeOf<boolean | undefined>();
  });
});
