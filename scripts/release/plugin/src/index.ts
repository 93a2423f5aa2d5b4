import { Action, ConfigError, SignalKind, type Plugin, type Signal, type SignalRoute } from '@signalyard/core';

/** Options of {@link keywordGatePlugin}. */
export interface KeywordGateOptions {
  /** Words that make a user message rejected with `blocked_word` (case-insensitive). */
  readonly blocked: readonly string[];
}

const textOf = (signal: Signal): string => {
  const payload = signal.payload;
  if (typeof payload === 'string') return payload;
  if (typeof payload === 'object' && payload !== null && typeof (payload as { text?: unknown }).text === 'string') {
    return (payload as { text: string }).text;
  }
  return '';
};

/**
 * A plugin in the plugin tier: rejects user messages that contain a blocked word, and answers
 * `/echo <text>` through its `echo` custom action.
 */
export function keywordGatePlugin(options: KeywordGateOptions): Plugin {
  if (options.blocked.length === 0) {
    throw new ConfigError({ problems: [{ path: 'blocked', message: 'expected at least one word' }] });
  }
  const blocked = options.blocked.map((w) => w.toLowerCase());
  const routes: SignalRoute[] = [
    {
      kind: SignalKind.UserMessage,
      name: 'keyword-gate',
      priority: 10,
      predicate: (s) => blocked.some((w) => textOf(s).toLowerCase().includes(w)),
      action: Action.reject('blocked_word'),
    },
    {
      kind: SignalKind.UserMessage,
      name: 'keyword-echo',
      predicate: (s) => textOf(s).startsWith('/echo '),
      action: Action.custom('echo'),
    },
  ];
  return {
    name: 'keyword-gate',
    signalRoutes: () => routes,
    setup(ctx) {
      ctx.handleCustomAction('echo', ({ signal }) => textOf(signal).slice('/echo '.length));
    },
  };
}
