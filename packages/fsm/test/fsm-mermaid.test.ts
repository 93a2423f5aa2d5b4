import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ClosureGuard, FsmStrategy, type FsmDefinition } from '@signalyard/fsm';

const quality = (input: unknown): boolean =>
  (input as { quality?: number } | undefined)?.quality !== undefined && (input as { quality: number }).quality > 0.5;

/** The source design's example: idle/running/done/revising, review guarded by quality_guard, done final. */
function sourceExample(): FsmDefinition {
  return FsmStrategy.builder()
    .state('idle')
    .state('running')
    .state('done', { final: true })
    .state('revising')
    .initial('idle')
    .transition('idle', 'start', 'running')
    .transition('running', 'finish', 'done')
    .transition('running', 'review', 'revising')
    .transition('running', 'review', 'done', { guard: new ClosureGuard('quality_guard', quality), priority: 10 })
    .transition('revising', 'restart', 'running')
    .define();
}

describe('toMermaid()', () => {
  it("renders the source design's example machine exactly", () => {
    expect(sourceExample().toMermaid()).toBe(
      [
        'stateDiagram-v2',
        '    [*] --> idle',
        '    idle --> running : start',
        '    running --> done : finish',
        '    running --> revising : review',
        '    running --> done : review [quality_guard]',
        '    revising --> running : restart',
        '    done --> [*]',
      ].join('\n'),
    );
  });

  it("the source design's example machine behaves as its diagram says", () => {
    const def = sourceExample();
    const good = def.create();
    good.execute('start');
    expect(good.execute('review', { quality: 0.9 })).toEqual({
      from: 'running',
      action: 'review',
      to: 'done',
      guard: 'quality_guard',
    });
    const poor = def.create();
    poor.execute('start');
    expect(poor.execute('review', { quality: 0.1 })).toEqual({ from: 'running', action: 'review', to: 'revising' });
    expect(poor.execute('restart').to).toBe('running');
  });

  it('a machine with only an initial state is the header and the initial arrow', () => {
    expect(FsmStrategy.builder().initial('a').define().toMermaid()).toBe('stateDiagram-v2\n    [*] --> a');
  });

  it('shows a function guard as [guard#N]', () => {
    const def = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'x', 'a')
      .transition('a', 'go', 'b', { guard: () => true, priority: 2 })
      .define();
    expect(def.toMermaid()).toBe(
      ['stateDiagram-v2', '    [*] --> a', '    a --> a : x', '    a --> b : go [guard#1]'].join('\n'),
    );
  });

  it('lists transitions in registration order, whatever their priority', () => {
    const def = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'low', { priority: -1 })
      .transition('a', 'go', 'high', { priority: 9 })
      .define();
    expect(def.toMermaid().split('\n').slice(2)).toEqual(['    a --> low : go', '    a --> high : go']);
  });

  it('declares names outside [A-Za-z0-9_]+ as aliases s0, s1, … in order of first appearance and refers to them by alias', () => {
    const def = FsmStrategy.builder()
      .initial('waiting room')
      .transition('waiting room', 'call', 'in-progress')
      .transition('in-progress', 'finish', 'Done_2')
      .transition('in-progress', 'cancel', 'café')
      .transition('café', 'reopen', 'waiting room')
      .transition('Done_2', 'archive', '42')
      .define();
    expect(def.toMermaid()).toBe(
      [
        'stateDiagram-v2',
        '    state "waiting room" as s0',
        '    state "in-progress" as s1',
        '    state "café" as s2',
        '    [*] --> s0',
        '    s0 --> s1 : call',
        '    s1 --> Done_2 : finish',
        '    s1 --> s2 : cancel',
        '    s2 --> s0 : reopen',
        '    Done_2 --> 42 : archive',
      ].join('\n'),
    );
  });

  it('numbers aliases by first appearance even when a name first appears as a target', () => {
    const def = FsmStrategy.builder()
      .initial('plain')
      .transition('plain', 'go', 'z z')
      .transition('y.y', 'back', 'plain')
      .define();
    expect(def.toMermaid()).toBe(
      [
        'stateDiagram-v2',
        '    state "z z" as s0',
        '    state "y.y" as s1',
        '    [*] --> plain',
        '    plain --> s0 : go',
        '    s1 --> plain : back',
      ].join('\n'),
    );
  });

  it('writes final-state lines last, in order of declaration', () => {
    const def = FsmStrategy.builder()
      .state('z_end', { final: true })
      .state('mid')
      .state('a_end', { final: true })
      .state('never_reached', { final: true })
      .initial('mid')
      .transition('mid', 'fail', 'a_end')
      .transition('mid', 'succeed', 'z_end')
      .define();
    expect(def.toMermaid()).toBe(
      [
        'stateDiagram-v2',
        '    [*] --> mid',
        '    mid --> a_end : fail',
        '    mid --> z_end : succeed',
        '    z_end --> [*]',
        '    a_end --> [*]',
        '    never_reached --> [*]',
      ].join('\n'),
    );
  });

  it('final states with aliased names use their aliases', () => {
    const def = FsmStrategy.builder()
      .state('start here')
      .state('end-a', { final: true })
      .initial('start here')
      .transition('start here', 'go', 'end-a')
      .define();
    expect(def.toMermaid()).toBe(
      [
        'stateDiagram-v2',
        '    state "start here" as s0',
        '    state "end-a" as s1',
        '    [*] --> s0',
        '    s0 --> s1 : go',
        '    s1 --> [*]',
      ].join('\n'),
    );
  });

  it('definition.toMermaid() equals the instance and strategy diagrams, whatever the state', () => {
    const def = sourceExample();
    const fsm = def.create();
    const expected = def.toMermaid();
    expect(fsm.toMermaid()).toBe(expected);
    expect(fsm.toMermaid()).toBe(expected);
    fsm.execute('start');
    expect(fsm.toMermaid()).toBe(expected);
  });

  it('never gives an aliased state an alias that is the name of a real state', () => {
    const def = FsmStrategy.builder()
      .initial('a b')
      .transition('a b', 'go', 's0')
      .transition('s0', 'go', 's1')
      .transition('s1', 'back', 'c-d')
      .define();
    expect(def.toMermaid()).toBe(
      [
        'stateDiagram-v2',
        '    state "a b" as s2',
        '    state "c-d" as s3',
        '    [*] --> s2',
        '    s2 --> s0 : go',
        '    s0 --> s1 : go',
        '    s1 --> s3 : back',
      ].join('\n'),
    );
  });

  it('skips aliases that are declared state names even when those states appear in no transition', () => {
    const def = FsmStrategy.builder().state('s0').state('x y').initial('x y').define();
    expect(def.toMermaid()).toBe(['stateDiagram-v2', '    state "x y" as s1', '    [*] --> s1'].join('\n'));
  });
});

/** Reads a diagram back: every transition line's (from, to) and every final state, by name. */
function readDiagram(diagram: string): {
  aliases: string[];
  initial: string;
  transitions: [string, string][];
  finals: string[];
} {
  const lines = diagram.split('\n');
  expect(lines[0]).toBe('stateDiagram-v2');
  const byAlias = new Map<string, string>();
  const aliases: string[] = [];
  const transitions: [string, string][] = [];
  const finals: string[] = [];
  let initial: string | undefined;
  const name = (id: string): string => byAlias.get(id) ?? id;
  for (const line of lines.slice(1)) {
    const declaration = /^ {4}state "(.*)" as (\S+)$/s.exec(line);
    if (declaration !== null) {
      const alias = declaration[2] as string;
      aliases.push(alias);
      byAlias.set(alias, (declaration[1] as string).replace(/#quot;/g, '"'));
      continue;
    }
    const arrow = /^ {4}(\S+) --> (\S+)(?: : .*)?$/s.exec(line);
    if (arrow === null) throw new Error(`unexpected line ${JSON.stringify(line)}`);
    const [from, to] = [arrow[1] as string, arrow[2] as string];
    if (from === '[*]') initial = name(to);
    else if (to === '[*]') finals.push(name(from));
    else transitions.push([name(from), name(to)]);
  }
  return { aliases, initial: initial as string, transitions, finals };
}

describe('toMermaid() property', () => {
  // Names without line breaks or quotes: the diagram flattens those, so they could not be read back.
  const stateName = fc.oneof(
    fc.constantFrom('s0', 's1', 's2', 's3', 's10', 'a b', 's 0', 'S0'),
    fc.stringMatching(/^[A-Za-z0-9_]{1,4}$/),
    fc.string({ minLength: 1, maxLength: 6 }).filter((n) => !/[\r\n"]/.test(n)),
  );

  it('aliases never collide with state names or each other, and every line names the right states', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(stateName, { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 12 }),
        fc.boolean(),
        (states, edges, declare) => {
          const pick = (i: number): string => states[i % states.length] as string;
          const builder = FsmStrategy.builder().initial(pick(0));
          if (declare) for (const state of states) builder.state(state);
          const transitions = edges.map(([from, to]): [string, string] => [pick(from), pick(to)]);
          transitions.forEach(([from, to], i) => builder.transition(from, `go${String(i)}`, to));
          const definition = builder.define();
          const diagram = readDiagram(definition.toMermaid());
          expect(new Set(diagram.aliases).size).toBe(diagram.aliases.length);
          for (const alias of diagram.aliases) expect(definition.states).not.toContain(alias);
          expect(diagram.initial).toBe(pick(0));
          expect(diagram.transitions).toEqual(transitions);
          expect(diagram.finals).toEqual([]);
        },
      ),
    );
  });
});
