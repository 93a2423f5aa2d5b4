import { describe, expect, expectTypeOf, it } from 'vitest';
import fc from 'fast-check';
import {
  ConfigError,
  ModelStreamError,
  type ChatModel,
  type ChatResponse,
  type ChatStreamPart,
  type Tool,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  CrewExecutor,
  SignalMatcher,
  parseCrewConfig,
  resolveCrewConfig,
  type CrewConfigInput,
  type CrewEvent,
} from '@signalyard/crew';
import { expectCode, throwsCode } from '@signalyard/test-utils';
import { collect, deferred, endOf, trace } from './crew-support.js';

type TextDelta = Extract<CrewEvent, { type: 'text_delta' }>;
const deltas = (events: readonly CrewEvent[]): TextDelta[] =>
  events.filter((e): e is TextDelta => e.type === 'text_delta');
/** The visible text each agent streamed, in order, as `agent: text` (deltas of one reply joined). */
function spoken(events: readonly CrewEvent[]): string[] {
  const out: string[] = [];
  let text = '';
  for (const e of events) {
    if (e.type === 'text_delta') text += e.delta;
    if (e.type === 'agent_response') {
      out.push(`${e.agentId}: ${text}`);
      text = '';
    }
  }
  return out;
}

/** teacher ⇄ student by signals, reporter terminal; [END] ends; every agent's signals hidden everywhere. */
const classCrew = (settings: CrewConfigInput['settings'] = {}): CrewConfigInput => ({
  entryPoint: 'teacher',
  agents: [{ id: 'teacher' }, { id: 'student' }, { id: 'reporter' }],
  settings,
  routing: {
    signals: {
      teacher: [
        { signal: '[ASK_STUDENT]', target: 'student' },
        { signal: '[REPORT]', target: 'reporter' },
        { signal: '[END]', target: '' },
      ],
      student: [{ signal: '[ANSWER]', target: 'teacher' }],
    },
    agentBehaviors: { reporter: { isTerminal: true } },
  },
});

/** A model that streams each scripted reply in the given chunks, and counts its calls. */
function chunkedModel(replies: readonly (readonly string[])[]): ChatModel & { generated: number; streamed: number } {
  let next = 0;
  const model = {
    generated: 0,
    streamed: 0,
    generate(): Promise<ChatResponse> {
      model.generated++;
      const chunks = replies[next++] ?? [];
      return Promise.resolve({ content: chunks.join('') });
    },
    async *stream(): AsyncIterable<ChatStreamPart> {
      model.streamed++;
      const chunks = replies[next++] ?? [];
      for (const delta of chunks) if (delta !== '') yield { type: 'text-delta', delta };
      yield { type: 'finish', response: { content: chunks.join('') } };
    },
  };
  return model;
}

describe('executeStream: text_delta events', () => {
  it('streams each reply before its agent_response, with the agent path through the handoffs', async () => {
    const model = scriptedModel(
      {
        teacher: ['What is 2 + 2? [ASK_STUDENT]', 'Right. [REPORT]'],
        student: ['It is 4. [ANSWER]'],
        reporter: ['Student answered 4.'],
      },
      { streamChunkChars: 5 },
    );
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'start');

    expect(spoken(events)).toEqual([
      'teacher: What is 2 + 2?',
      'student: It is 4.',
      'teacher: Right.',
      'reporter: Student answered 4.',
    ]);
    const paths = deltas(events).map((d) => `${d.agentId} ${d.path.join('>')}`);
    expect([...new Set(paths)]).toEqual([
      'teacher teacher',
      'student teacher>student',
      'teacher teacher>student>teacher',
      'reporter teacher>student>teacher>reporter',
    ]);
    for (const d of deltas(events)) expect('group' in d).toBe(false);
    // Each delta comes after its agent_start and before its agent_response.
    const types = events.map((e) =>
      e.type === 'text_delta' ? 'd' : e.type === 'agent_response' ? 'r' : e.type === 'agent_start' ? 's' : '',
    );
    expect(types.join('')).toMatch(/^(sd+r)+$/);
    const response = endOf(events);
    expect(response.visibleContent).toBe('Student answered 4.');
    expect(response.content).toBe('Student answered 4.');
  });

  it('keeps the raw text in history and agent_response, and hides markers from the deltas and visibleContent', async () => {
    const model = scriptedModel(['Over to you [ask_student]', 'Me? [ ANSWER ] ok', 'Thanks. [END]'], {
      streamChunkChars: 3,
    });
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go');
    const response = endOf(events);

    expect(spoken(events)).toEqual(['teacher: Over to you', 'student: Me? ok', 'teacher: Thanks.']);
    expect(events.filter((e) => e.type === 'agent_response').map((e) => e.content)).toEqual([
      'Over to you [ask_student]',
      'Me? [ ANSWER ] ok',
      'Thanks. [END]',
    ]);
    expect(response.state.history.map((m) => m.content)).toEqual([
      'go',
      'Over to you [ask_student]',
      'Me? [ ANSWER ] ok',
      'Thanks. [END]',
    ]);
    expect(response).toMatchObject({
      content: 'Thanks. [END]',
      visibleContent: 'Thanks.',
      reason: 'terminated_by_signal',
    });
    // Models see their own markers.
    expect(model.calls[2]?.messages.map((m) => m.content)).toContain('Me? [ ANSWER ] ok');
  });

  it('hides a marker split across deltas, and markers of other agents that a model echoes', async () => {
    const model = chunkedModel([
      ['Student, [AS', 'K_STU', 'DENT', '] please'],
      ['I heard [ask_', 'student] and [RE', 'PORT]; my answer: 4 [ANS', 'WER]'],
      ['Done ', '[END', ']'],
    ]);
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go');

    expect(spoken(events)).toEqual(['teacher: Student, please', 'student: I heard and; my answer: 4', 'teacher: Done']);
    const all = deltas(events).map((d) => d.delta);
    expect(all.join('')).not.toMatch(/[[\]]/);
    expect(model.streamed).toBe(3);
    expect(model.generated).toBe(0);
  });

  it('a parallel group: members stream with the group and their own path, interleaved as they arrive', async () => {
    // s1, then r1, then s2, then r2: each chunk is read before the next one is produced.
    const [s1, r1, s2] = [deferred(), deferred(), deferred()];
    const members: Record<string, ChatModel> = {
      teacher: scriptedModel(['Both of you: [ASK_ALL]', 'Good. [END]']),
      student: lockstepModel(['s1 ', 's2'], [undefined, r1], [s1, s2]),
      reporter: lockstepModel(['r1 ', 'r2'], [s1, s2], [r1, undefined]),
    };
    const crew: CrewConfigInput = {
      entryPoint: 'teacher',
      agents: [{ id: 'teacher' }, { id: 'student' }, { id: 'reporter' }],
      routing: {
        signals: {
          teacher: [
            { signal: '[ASK_ALL]', target: 'all' },
            { signal: '[END]', target: '' },
          ],
        },
        parallelGroups: { all: { agents: ['student', 'reporter'], nextAgent: 'teacher' } },
      },
    };
    const events = await collect(new CrewExecutor({ crew, model: members }), 'go');

    const memberDeltas = deltas(events).filter((d) => d.group !== undefined);
    expect(memberDeltas.map((d) => d.delta)).toEqual(['s1', 'r1', ' s2', ' r2']);
    expect(memberDeltas.map((d) => `${d.agentId}@${d.group} ${d.path.join('>')}`)).toEqual([
      'student@all teacher>student',
      'reporter@all teacher>reporter',
      'student@all teacher>student',
      'reporter@all teacher>reporter',
    ]);
    // After the group, the next agent's path continues from the agent that started it.
    expect(deltas(events).at(-1)).toEqual({
      type: 'text_delta',
      agentId: 'teacher',
      delta: 'Good.',
      path: ['teacher', 'teacher'],
    });
    expect(trace(events).slice(0, 6)).toEqual([
      'agent_start:teacher',
      'agent_response:teacher',
      'parallel_start',
      'handoff:teacher>student:parallel',
      'handoff:teacher>reporter:parallel',
      'agent_start:student@all',
    ]);
  });

  it('streams every reply of a tool loop, each reply hidden on its own', async () => {
    const lookup: Tool = {
      name: 'lookup',
      parameters: { type: 'object' },
      execute: () => Promise.resolve('42'),
    };
    const model = scriptedModel(
      [{ content: 'Let me look. ', toolCalls: [{ id: 'c1', name: 'lookup', arguments: {} }] }, 'It is 42. [END]'],
      { streamChunkChars: 4 },
    );
    const crew: CrewConfigInput = {
      entryPoint: 'clerk',
      agents: [{ id: 'clerk', tools: ['lookup'] }],
      routing: { signals: { clerk: [{ signal: '[END]', target: '' }] } },
    };
    const events = await collect(new CrewExecutor({ crew, model, tools: [lookup] }), 'q');
    expect(spoken(events)).toEqual(['clerk: Let me look.', 'clerk: It is 42.']);
    expect(trace(events)).toEqual([
      'agent_start:clerk',
      'agent_response:clerk',
      'tool_start:lookup',
      'tool_result:lookup',
      'agent_response:clerk',
      'terminate:terminated_by_signal',
      'end',
    ]);
  });

  it('a model without stream is read through generate: one delta per reply', async () => {
    const model: ChatModel = { generate: () => Promise.resolve({ content: '  Hi there [REPORT] ' }) };
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go');
    expect(deltas(events)).toEqual([
      { type: 'text_delta', agentId: 'teacher', delta: 'Hi there', path: ['teacher'] },
      { type: 'text_delta', agentId: 'reporter', delta: 'Hi there', path: ['teacher', 'reporter'] },
    ]);
  });

  it('a reply with no visible text emits no delta', async () => {
    const model = scriptedModel(['[REPORT]', '']);
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go');
    expect(deltas(events)).toEqual([]);
    expect(endOf(events)).toMatchObject({ agentId: 'reporter', content: '', visibleContent: '' });
  });

  it('textDeltas: false calls generate and emits no text_delta', async () => {
    const model = chunkedModel([['Over ', '[ASK_STUDENT]'], ['4 [ANSWER]'], ['ok [END]']]);
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go', { textDeltas: false });
    expect(deltas(events)).toEqual([]);
    expect(model).toMatchObject({ generated: 3, streamed: 0 });
    expect(endOf(events)).toMatchObject({ content: 'ok [END]', visibleContent: 'ok' });
  });

  it('one model call is one stream: max_rounds counts streamed calls as it counts generated ones', async () => {
    const model = chunkedModel([['a [ASK_STUDENT]'], ['b [ANSWER]'], ['c [ASK_STUDENT]']]);
    const events = await collect(new CrewExecutor({ crew: classCrew({ maxRounds: 2 }), model }), 'go');
    expect(endOf(events).reason).toBe('max_rounds');
    expect(model).toMatchObject({ streamed: 2, generated: 0 });
  });
});

describe('hide_signals', () => {
  it('false: deltas and visibleContent are the raw text', async () => {
    const model = scriptedModel(['Over to you [ASK_STUDENT] ', ' 4 [ANSWER]', 'ok [END]'], { streamChunkChars: 2 });
    const events = await collect(new CrewExecutor({ crew: classCrew({ hideSignals: false }), model }), 'go');
    expect(spoken(events)).toEqual([
      'teacher: Over to you [ASK_STUDENT] ',
      'student:  4 [ANSWER]',
      'teacher: ok [END]',
    ]);
    expect(endOf(events)).toMatchObject({ content: 'ok [END]', visibleContent: 'ok [END]' });
  });

  it('is read from crew.yaml settings (default true) and validated', () => {
    const base = 'entry_point: a\nagents: [{ id: a }]\n';
    expect(parseCrewConfig(base).settings.hideSignals).toBe(true);
    expect(parseCrewConfig(`${base}settings:\n  hide_signals: false\n`).settings.hideSignals).toBe(false);
    const error = throwsCode(() => parseCrewConfig(`${base}settings:\n  hide_signals: "no"\n`), 'CONFIG_INVALID');
    expect(ConfigError.isInstance(error) && error.problems).toEqual([
      expect.objectContaining({ path: 'settings.hide_signals', line: 4, message: 'expected true or false, got "no"' }),
    ]);
    const inCode = throwsCode(
      () =>
        resolveCrewConfig({
          entryPoint: 'a',
          agents: [{ id: 'a' }],
          settings: { hideSignals: 1 as unknown as boolean },
        }),
      'CONFIG_INVALID',
    );
    expect(inCode.message).toContain('settings.hideSignals');
  });

  it('a signal longer than 200 code units is refused, so the hold-back window covers every marker', () => {
    const long = `[${'X'.repeat(199)}]`;
    const crew = (signal: string): CrewConfigInput => ({
      entryPoint: 'a',
      agents: [{ id: 'a' }],
      routing: { signals: { a: [{ signal, target: '' }] } },
    });
    expect(() => resolveCrewConfig(crew(long.slice(1)))).toThrow(/expected "\[NAME\]"/);
    expect(resolveCrewConfig(crew(`[${'X'.repeat(198)}]`)).routing.signals.a?.[0]?.signal).toHaveLength(200);
    const error = throwsCode(() => resolveCrewConfig(crew(long)), 'CONFIG_INVALID');
    expect(ConfigError.isInstance(error) && error.problems).toEqual([
      expect.objectContaining({
        path: 'routing.signals.a[0].signal',
        message: expect.stringMatching(/is 201 UTF-16 code units long: expected at most 200$/),
      }),
    ]);
  });
});

describe('CrewExecutor.visibleText', () => {
  it('applies the crew’s markers, or returns the content when hideSignals is false', () => {
    const model = scriptedModel([]);
    const hiding = new CrewExecutor({ crew: classCrew(), model });
    expect(hiding.visibleText('Good question. [ASK_STUDENT]')).toBe('Good question.');
    expect(hiding.visibleText('Over to you [ ask_student ] now')).toBe('Over to you now');
    const raw = new CrewExecutor({ crew: classCrew({ hideSignals: false }), model });
    expect(raw.visibleText(' Good question. [ASK_STUDENT]')).toBe(' Good question. [ASK_STUDENT]');
  });

  it('refuses content that is not a string', () => {
    const executor = new CrewExecutor({ crew: classCrew(), model: scriptedModel([]) });
    throwsCode(() => executor.visibleText(42 as unknown as string), 'CREW_CONTENT_INVALID');
  });
});

describe('execute and executeStream agree', () => {
  it('the same replies give the same response, streamed or not', async () => {
    const script = {
      teacher: ['Q? [ASK_STUDENT]', 'Right.  [REPORT]'],
      student: ['4 [answer]'],
      reporter: ['  All done [END] '],
    };
    const crew = classCrew();
    const executed = await new CrewExecutor({ crew, model: scriptedModel(script) }).execute('go');
    const streamed = endOf(
      await collect(new CrewExecutor({ crew, model: scriptedModel(script, { streamChunkChars: 1 }) }), 'go'),
    );
    expect(streamed).toEqual(executed);
    expect(executed.visibleContent).toBe('All done');
  });
});

describe('streamed runs that fail', () => {
  it('a stream that breaks the rules fails the run with CREW_AGENT_FAILED, caused by MODEL_STREAM_INVALID', async () => {
    const model: ChatModel = {
      generate: () => Promise.reject(new Error('not used')),
      async *stream(): AsyncIterable<ChatStreamPart> {
        yield { type: 'text-delta', delta: 'Hello' };
        yield { type: 'finish', response: { content: 'Goodbye' } };
      },
    };
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go');
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    if (last?.type !== 'error') return;
    expectCode(last.error, 'CREW_AGENT_FAILED');
    expect(ModelStreamError.isInstance(last.error.cause)).toBe(true);
    expect(last.state.history).toEqual([{ role: 'user', content: 'go' }]);
    expect(deltas(events).map((d) => d.delta)).toEqual(['Hello']);
  });

  it.each<[string, readonly ChatStreamPart[]]>([
    [
      'text after finish',
      [
        { type: 'text-delta', delta: 'Yes. [ANSWER]' },
        { type: 'finish', response: { content: 'Yes. [ANSWER]' } },
        { type: 'text-delta', delta: ' PS' },
      ],
    ],
    [
      'deltas not matching the content',
      [
        { type: 'text-delta', delta: 'Yes.' },
        { type: 'finish', response: { content: 'Yes. [ANSWER]' } },
      ],
    ],
    ['no finish', [{ type: 'text-delta', delta: 'Yes. [ANSWER]' }]],
  ])('%s: MODEL_STREAM_INVALID fails the run, and no part of that reply reaches the history', async (_title, parts) => {
    const student: ChatModel = {
      generate: () => Promise.reject(new Error('not used')),
      async *stream(): AsyncIterable<ChatStreamPart> {
        yield* parts;
      },
    };
    const model = { teacher: scriptedModel(['Question? [ASK_STUDENT]']), student, reporter: scriptedModel([]) };
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go');
    const last = events.at(-1);
    if (last?.type !== 'error') return expect.unreachable('expected the run to fail');
    expectCode(last.error, 'CREW_AGENT_FAILED');
    expect(last.error).toMatchObject({ agentId: 'student' });
    expectCode(last.error.cause, 'MODEL_STREAM_INVALID');
    // The history is the last good state: the user message and the teacher's whole reply.
    expect(last.state.history.map((m) => m.content)).toEqual(['go', 'Question? [ASK_STUDENT]']);
    expect(events.some((e) => e.type === 'agent_response' && e.agentId === 'student')).toBe(false);
  });

  it('a model failing mid-stream: held-back text is never released', async () => {
    const model: ChatModel = {
      generate: () => Promise.reject(new Error('not used')),
      async *stream(): AsyncIterable<ChatStreamPart> {
        yield { type: 'text-delta', delta: 'Wait [ASK_' };
        throw new Error('connection lost');
      },
    };
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go');
    expect(deltas(events).map((d) => d.delta)).toEqual(['Wait']);
    const last = events.at(-1);
    expect(last?.type === 'error' && last.error.message).toMatch(/connection lost/);
  });

  it('an abort while a stream is open ends the run with ABORTED, after the deltas already read', async () => {
    const controller = new AbortController();
    const model: ChatModel = {
      generate: () => Promise.reject(new Error('not used')),
      async *stream(): AsyncIterable<ChatStreamPart> {
        yield { type: 'text-delta', delta: 'Thinking' };
        controller.abort();
        await new Promise(() => undefined); // ignores the abort: streamChat stops reading anyway
      },
    };
    const events = await collect(new CrewExecutor({ crew: classCrew(), model }), 'go', {
      abortSignal: controller.signal,
    });
    expect(deltas(events).map((d) => d.delta)).toEqual(['Thinking']);
    const last = events.at(-1);
    expect(last?.type === 'error' && last.error.code).toBe('ABORTED');
  });

  it('textDeltas must be a boolean', async () => {
    const events = await collect(new CrewExecutor({ crew: classCrew(), model: scriptedModel([]) }), 'go', {
      textDeltas: 'yes' as unknown as boolean,
    });
    const last = events.at(-1);
    expect(last?.type === 'error' && last.error.code).toBe('CREW_ARGUMENT_INVALID');
    expect(last?.type === 'error' && last.error.message).toBe('Invalid textDeltas "yes": expected true or false');
  });
});

describe('streaming: properties', () => {
  const signals = ['[ASK_STUDENT]', '[REPORT]', '[END]', '[ANSWER]'];
  const matcher = new SignalMatcher(signals);
  const piece = fc.oneof(
    fc.constantFrom(
      '[answer]',
      '[ Answer ]',
      '[ANSWER]',
      '[ask_student]',
      '[ASK  STUDENT]',
      '[ANSWERS]',
      '[REPORT]',
      '[END_X]',
    ),
    fc.constantFrom(' ', '\n', '  ', '\t'),
    fc.string({ unit: 'grapheme', maxLength: 6 }).map((s) => s.replace(/[[\]]/g, '')),
  );
  // The reporter is terminal and has no signals: its reply, whatever it holds, ends the run.
  const soloCrew: CrewConfigInput = {
    entryPoint: 'reporter',
    agents: [{ id: 'reporter' }, { id: 'teacher' }],
    routing: {
      signals: { teacher: signals.map((signal, i) => ({ signal, target: i === 2 ? '' : 'reporter' })) },
      agentBehaviors: { reporter: { isTerminal: true } },
    },
  };

  it('for random replies and chunk sizes, the deltas concatenate to visibleContent and never show a marker', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 12 }), fc.integer({ min: 1, max: 20 }), async (pieces, size) => {
        const reply = pieces.join('');
        const executor = new CrewExecutor({
          crew: soloCrew,
          model: scriptedModel([reply], { streamChunkChars: size }),
        });
        const events = await collect(executor, 'go');
        const response = endOf(events);
        let shown = '';
        for (const d of deltas(events)) {
          shown += d.delta;
          expect(matcher.first(shown)).toBeUndefined();
        }
        expect(shown).toBe(response.visibleContent);
        expect(response.visibleContent).toBe(executor.visibleText(reply));
        expect(response.content).toBe(reply);
      }),
      { numRuns: 300 },
    );
  });
});

describe('types', () => {
  it('text_delta carries agentId, delta, path and an optional group; CrewResponse has visibleContent', () => {
    expectTypeOf<TextDelta>().toEqualTypeOf<{
      type: 'text_delta';
      agentId: string;
      delta: string;
      path: readonly string[];
      group?: string;
    }>();
    expectTypeOf<Extract<CrewEvent, { type: 'end' }>['response']['visibleContent']>().toEqualTypeOf<string>();
  });
});

interface Gate {
  readonly promise: Promise<void>;
  resolve(): void;
}

/**
 * A streaming model that yields its two chunks in lockstep with another: before chunk `i` it
 * waits for `waits[i]` (if any), and once chunk `i` has been read it opens `opens[i]`.
 */
function lockstepModel(
  chunks: readonly [string, string],
  waits: readonly [Gate?, Gate?],
  opens: readonly [Gate?, Gate?],
): ChatModel {
  return {
    generate: () => Promise.reject(new Error('not used')),
    async *stream(): AsyncIterable<ChatStreamPart> {
      await waits[0]?.promise;
      yield { type: 'text-delta', delta: chunks[0] };
      opens[0]?.resolve();
      await waits[1]?.promise;
      yield { type: 'text-delta', delta: chunks[1] };
      opens[1]?.resolve();
      yield { type: 'finish', response: { content: chunks.join('') } };
    },
  };
}
