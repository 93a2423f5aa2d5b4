// Every public function of @signalyard/crew that takes a string parameter (or a string field of
// an object it takes), given each kind of non-string: a typed SignalyardError with its code
// (thrown, as a rejection, or — for `executeStream`, whose iterator never throws — as the
// `error` event that ends the stream), never a TypeError. Predicates answer `false` instead.
import { describe, expect, it } from 'vitest';
import { isSignalyardError, type Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  CrewExecutor,
  SignalMatcher,
  isValidSignal,
  loadCrewConfig,
  matchLevel,
  parseCrewConfig,
  resolveCrewConfig,
  signalMatches,
  type CrewConfigInput,
} from '@signalyard/crew';
import { NON_STRINGS, collect, expectCode, failure } from '@signalyard/test-utils';

type Call = (bad: never) => unknown;

const CONFIG = 'CONFIG_INVALID';
const ARG = 'CREW_ARGUMENT_INVALID';
const crew: CrewConfigInput = { entryPoint: 'a', agents: [{ id: 'a' }, { id: 'b' }] };
const executor = new CrewExecutor({ crew, model: scriptedModel(['done']) });
const withCrew = (patch: (c: Record<string, unknown>) => void): unknown => {
  const c = structuredClone(crew) as unknown as Record<string, unknown>;
  patch(c);
  return resolveCrewConfig(c as unknown as CrewConfigInput);
};
const agents = (c: Record<string, unknown>): Record<string, unknown>[] => c.agents as Record<string, unknown>[];
const tool = (name: unknown): Tool =>
  ({ name, parameters: {}, execute: () => Promise.resolve('ok') }) as unknown as Tool;

/** The error ending `executeStream`'s stream (it never throws). */
async function streamError(input: unknown, opts?: unknown): Promise<unknown> {
  const events = await collect(executor.executeStream(input as string, opts as never));
  const last = events[events.length - 1];
  if (last?.type !== 'error') return expect.unreachable(`expected an error event, got ${last?.type ?? 'nothing'}`);
  throw last.error;
}

/** [function, call with the bad value, expected code, the parameter is optional (undefined is valid)]. */
const THROWING: readonly (readonly [string, Call, string, boolean?])[] = [
  ['matchLevel(signal)', (bad) => matchLevel(bad, 'text'), 'CREW_SIGNAL_INVALID'],
  ['matchLevel(signal, content)', (bad) => matchLevel('[DONE]', bad), 'CREW_CONTENT_INVALID'],
  ['signalMatches(signal)', (bad) => signalMatches(bad, 'text'), 'CREW_SIGNAL_INVALID'],
  ['signalMatches(signal, content)', (bad) => signalMatches('[DONE]', bad), 'CREW_CONTENT_INVALID'],
  ['new SignalMatcher(signals[i])', (bad) => new SignalMatcher(['[A]', bad]), 'CREW_SIGNAL_INVALID'],
  ['SignalMatcher#first(content)', (bad) => new SignalMatcher(['[A]']).first(bad), 'CREW_CONTENT_INVALID'],
  ['SignalMatcher#matchAll(content)', (bad) => new SignalMatcher(['[A]']).matchAll(bad), 'CREW_CONTENT_INVALID'],
  ['parseCrewConfig(yaml)', (bad) => parseCrewConfig(bad), CONFIG],
  ['parseCrewConfig(yaml, { file })', (bad) => parseCrewConfig('entry_point: a\n', { file: bad }), CONFIG, true],
  ['loadCrewConfig(path)', (bad) => loadCrewConfig(bad), CONFIG],
  ['resolveCrewConfig({ entryPoint })', (bad) => withCrew((c) => (c.entryPoint = bad)), CONFIG],
  ['resolveCrewConfig({ agents[].id })', (bad) => withCrew((c) => (agents(c)[1]!.id = bad)), CONFIG],
  ['resolveCrewConfig({ agents[].name })', (bad) => withCrew((c) => (agents(c)[0]!.name = bad)), CONFIG, true],
  [
    'resolveCrewConfig({ agents[].systemPrompt })',
    (bad) => withCrew((c) => (agents(c)[0]!.systemPrompt = bad)),
    CONFIG,
    true,
  ],
  [
    'resolveCrewConfig({ agents[].handoffTargets[] })',
    (bad) => withCrew((c) => (agents(c)[0]!.handoffTargets = [bad])),
    CONFIG,
  ],
  ['resolveCrewConfig({ agents[].tools[] })', (bad) => withCrew((c) => (agents(c)[0]!.tools = [bad])), CONFIG],
  [
    'resolveCrewConfig({ routing.signals[agent][].signal })',
    (bad) => withCrew((c) => (c.routing = { signals: { a: [{ signal: bad, target: 'b' }] } })),
    CONFIG,
  ],
  [
    'resolveCrewConfig({ routing.signals[agent][].target })',
    (bad) => withCrew((c) => (c.routing = { signals: { a: [{ signal: '[GO]', target: bad }] } })),
    CONFIG,
  ],
  [
    'resolveCrewConfig({ routing.signals[agent][].description })',
    (bad) => withCrew((c) => (c.routing = { signals: { a: [{ signal: '[GO]', target: 'b', description: bad }] } })),
    CONFIG,
    true,
  ],
  [
    'resolveCrewConfig({ routing.parallelGroups[name].agents[] })',
    (bad) => withCrew((c) => (c.routing = { parallelGroups: { g: { agents: [bad] } } })),
    CONFIG,
  ],
  [
    'resolveCrewConfig({ routing.parallelGroups[name].nextAgent })',
    (bad) => withCrew((c) => (c.routing = { parallelGroups: { g: { agents: ['b'], nextAgent: bad } } })),
    CONFIG,
    true,
  ],
  [
    'new CrewExecutor({ tools[].name })',
    (bad) => new CrewExecutor({ crew, model: scriptedModel([]), tools: [tool(bad)] }),
    CONFIG,
  ],
  ['CrewExecutor#execute(input)', (bad) => executor.execute(bad), ARG],
  [
    'CrewExecutor#execute(input, { resumeAgentId })',
    (bad) => executor.execute('hi', { resumeAgentId: bad }),
    ARG,
    true,
  ],
  [
    'CrewExecutor#execute(input, { state.pausedAgentId })',
    (bad) => executor.execute('hi', { state: { history: [], pausedAgentId: bad } }),
    ARG,
    true,
  ],
  [
    'CrewExecutor#execute(input, { state.history[].content })',
    (bad) => executor.execute('hi', { state: { history: [{ role: 'user', content: bad }] } }),
    ARG,
  ],
  [
    'CrewExecutor#execute(input, { state.history[].role })',
    (bad) => executor.execute('hi', { state: { history: [{ role: bad, content: 'x' }] } }),
    ARG,
  ],
  ['CrewExecutor#executeStream(input)', (bad) => streamError(bad), ARG],
  [
    'CrewExecutor#executeStream(input, { resumeAgentId })',
    (bad) => streamError('hi', { resumeAgentId: bad }),
    ARG,
    true,
  ],
];

describe.each(NON_STRINGS)('crew, given %s where a string is expected', (_label, bad: unknown) => {
  const rows = THROWING.filter(([, , , optional]) => !(optional === true && bad === undefined)).map(
    ([name, call, code]) => ({ name, call, code }),
  );
  it.each(rows)('$name fails with a SignalyardError and its code', async ({ call, code }) => {
    const error = await failure(() => call(bad as never));
    expect(isSignalyardError(error)).toBe(true);
    expectCode(error, code);
  });

  it('isValidSignal(signal) answers false', () => {
    expect(isValidSignal(bad as never)).toBe(false);
  });
});
