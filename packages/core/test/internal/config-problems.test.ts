import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import * as z from 'zod';
import type { ConfigProblem } from '@signalyard/core';
import { configProblemsFromZod, formatConfigPath, sortConfigProblems } from '@signalyard/core/internal';

function issuesOf(schema: z.ZodType, value: unknown): z.core.$ZodIssue[] {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected the value to fail the schema');
  return result.error.issues;
}

describe('formatConfigPath', () => {
  it('joins bare identifier keys with dots and indexes with brackets', () => {
    expect(formatConfigPath(['routing', 'bindings', 2, 'match', 'peer', 'id'])).toBe(
      'routing.bindings[2].match.peer.id',
    );
    expect(formatConfigPath(['agents', 0, 'system_prompt'])).toBe('agents[0].system_prompt');
    expect(formatConfigPath(['routing', 'signals', 'research-agent'])).toBe('routing.signals.research-agent');
    expect(formatConfigPath(['_private', 'A1'])).toBe('_private.A1');
  });

  it('quotes, JSON-style, every key that is not a bare identifier', () => {
    expect(formatConfigPath(['routing', 'signals', '1abc'])).toBe('routing.signals["1abc"]');
    expect(formatConfigPath(['links', '0'])).toBe('links["0"]'); // a key, never mistaken for an index
    expect(formatConfigPath(['links', '-x'])).toBe('links["-x"]');
    expect(formatConfigPath(['a', 'b.c'])).toBe('a["b.c"]');
    expect(formatConfigPath(['a', 'with space'])).toBe('a["with space"]');
    expect(formatConfigPath(['a', ''])).toBe('a[""]');
    expect(formatConfigPath(['a', 'quote"d'])).toBe('a["quote\\"d"]');
    expect(formatConfigPath(['a', 'é'])).toBe('a["é"]');
  });

  it('starts without a dot, also with a quoted first key or an index', () => {
    expect(formatConfigPath([])).toBe('');
    expect(formatConfigPath(['1abc', 'x'])).toBe('["1abc"].x');
    expect(formatConfigPath([3, 'x'])).toBe('[3].x');
  });

  it('prints a symbol key by its description (zod paths may hold symbols)', () => {
    expect(formatConfigPath(['a', Symbol('s')])).toBe('a[Symbol(s)]');
  });

  it('never throws, and a path of bare keys reads back by splitting on dots', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.nat())), (path) => {
        expect(typeof formatConfigPath(path)).toBe('string');
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/), { minLength: 1 }), (keys) => {
        expect(formatConfigPath(keys).split('.')).toEqual(keys);
      }),
    );
  });
});

describe('configProblemsFromZod', () => {
  const schema = z.strictObject({
    name: z.string(),
    limits: z.strictObject({ max: z.number().int().positive() }).optional(),
    tags: z.array(z.string()).optional(),
  });

  it('makes one problem per issue, with the path printed by formatConfigPath and zod’s message', () => {
    const problems = configProblemsFromZod(issuesOf(schema, { name: 1, limits: { max: -1 }, tags: ['a', 2] }));

    expect(problems.map((p) => p.path)).toEqual(['name', 'limits.max', 'tags[1]']);
    for (const p of problems) expect(p.message.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.line === undefined)).toBe(true);
  });

  it('splits an unrecognized_keys issue into one problem per unknown key, its path ending with the key', () => {
    const problems = configProblemsFromZod(
      issuesOf(schema, { name: 'x', colour: 'red', '1abc': 1, limits: { max: 1, min: 0 } }),
    );

    expect(problems).toHaveLength(3);
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: 'colour', message: 'unknown key "colour"' },
        { path: '["1abc"]', message: 'unknown key "1abc"' },
        { path: 'limits.min', message: 'unknown key "min"' },
      ]),
    );
    // The keys of one issue stay together, in the order zod listed them.
    const colour = problems.findIndex((p) => p.path === 'colour');
    expect(problems[colour + 1]?.path).toBe('["1abc"]');
  });

  it('renames paths with mapPath before locating and printing them', () => {
    const seen: PropertyKey[][] = [];
    const problems = configProblemsFromZod(issuesOf(schema, { name: 'x', limits: { max: 0, extra: 1 } }), {
      mapPath: (path) => ['file', ...path.map((k) => (k === 'limits' ? 'the_limits' : k))],
      position: (path) => {
        seen.push([...path]);
        return undefined;
      },
    });

    expect(problems.map((p) => p.path).sort()).toEqual(['file.the_limits.extra', 'file.the_limits.max']);
    expect(seen).toContainEqual(['file', 'the_limits', 'extra']);
  });

  it('takes the message of other issues from options.message, keeping zod’s when it returns undefined', () => {
    const problems = configProblemsFromZod(issuesOf(schema, { name: 1, tags: 'x', other: true }), {
      message: (issue) => (issue.path[0] === 'name' ? `custom: ${issue.code}` : undefined),
    });

    expect(problems.find((p) => p.path === 'name')?.message).toBe('custom: invalid_type');
    expect(problems.find((p) => p.path === 'tags')?.message).not.toContain('custom');
    expect(problems.find((p) => p.path === 'other')?.message).toBe('unknown key "other"');
  });

  it('adds the line and column that options.position gives, and nothing when it gives none', () => {
    const problems = configProblemsFromZod(issuesOf(schema, { name: 1, tags: 'x', zzz: 0 }), {
      position: (path) => (path[0] === 'name' ? { line: 3, column: 7 } : path[0] === 'zzz' ? { line: 9 } : undefined),
    });

    expect(problems).toContainEqual({ path: 'name', message: expect.any(String) as string, line: 3, column: 7 });
    expect(problems).toContainEqual({ path: 'zzz', message: 'unknown key "zzz"', line: 9 });
    const tags = problems.find((p) => p.path === 'tags');
    expect(tags).toBeDefined();
    expect('line' in (tags as object)).toBe(false);
    expect('column' in (tags as object)).toBe(false);
  });

  it('passes the issue to position, so a caller can point at a key rather than its value', () => {
    const codes: string[] = [];
    configProblemsFromZod(issuesOf(schema, { name: 'x', unknown: 1 }), {
      position: (_path, issue) => {
        codes.push(issue.code);
        return undefined;
      },
    });
    expect(codes).toEqual(['unrecognized_keys']);
  });

  it('gives no problem for no issue', () => {
    expect(configProblemsFromZod([])).toEqual([]);
  });
});

describe('sortConfigProblems', () => {
  it('orders by line, keeps the found order on one line, and puts problems without a line last', () => {
    const problems: ConfigProblem[] = [
      { path: 'a', message: 'no line' },
      { path: 'b', message: 'second on 4', line: 4 },
      { path: 'c', message: 'on 2', line: 2 },
      { path: 'd', message: 'third on 4', line: 4 },
      { path: 'e', message: 'no line either' },
    ];

    expect(sortConfigProblems(problems).map((p) => p.path)).toEqual(['c', 'b', 'd', 'a', 'e']);
  });
});
