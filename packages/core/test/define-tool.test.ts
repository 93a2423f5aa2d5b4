import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import * as z from 'zod';
import * as zm from 'zod/mini';
import { SignalyardError, ToolArgumentsError, defineTool, isSignalyardError } from '@signalyard/core';
import type { Tool, ToolContext } from '@signalyard/core';
import { rejection as rejectionOf, thrown as thrownBy } from '@signalyard/test-utils';

const ctx: ToolContext = { toolCallId: 'call_1', agentId: 'teacher' };

const lookupInput = z.object({
  word: z.string().min(1).describe('the word to look up'),
  limit: z.number().int().max(10).default(3),
  tags: z.array(z.string()).optional(),
});
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up',
  input: lookupInput,
  execute: async ({ word, limit, tags }) => ({ word, limit, tags: tags ?? [] }),
});

describe('defineTool: the tool it makes', () => {
  it('is a Tool with name, description and the JSON Schema of the input', () => {
    expect(lookup.name).toBe('lookup');
    expect(lookup.description).toBe('Look a word up');
    expect(lookup.parameters).toMatchObject({
      type: 'object',
      properties: {
        word: { type: 'string', minLength: 1, description: 'the word to look up' },
        limit: { type: 'integer', maximum: 10, default: 3 },
        tags: { type: 'array', items: { type: 'string' } },
      },
    });
    expect(lookup.parameters).toEqual(z.toJSONSchema(lookupInput));
    expect(Object.isFrozen(lookup)).toBe(true);
  });

  it('leaves description out when none is given', () => {
    const tool = defineTool({ name: 'now', input: z.object({}), execute: async () => 0 });
    expect('description' in tool).toBe(false);
    expect(tool.parameters).toMatchObject({ type: 'object', properties: {} });
  });

  it('runs execute on validated, defaulted and transformed arguments, passing the context', async () => {
    const execute = vi.fn(async (args: { q: string; n: number }) => `${args.q}:${args.n}`);
    const tool = defineTool({
      name: 'search',
      input: z.object({ q: z.string().transform((s) => s.trim()), n: z.number().default(1) }),
      execute,
    });
    await expect(tool.execute({ q: '  cats ' }, ctx)).resolves.toBe('cats:1');
    expect(execute).toHaveBeenCalledWith({ q: 'cats', n: 1 }, ctx);
    // transforms are fine: `parameters` describes the input side
    expect(tool.parameters).toMatchObject({ properties: { q: { type: 'string' } } });
  });

  it('strips unknown keys the way the schema does', async () => {
    await expect(lookup.execute({ word: 'x', extra: true }, ctx)).resolves.toEqual({ word: 'x', limit: 3, tags: [] });
  });

  it('answers invalid arguments with ToolArgumentsError naming every problem, without running execute', async () => {
    const execute = vi.fn(async () => 'ran');
    const tool = defineTool({
      name: 'lookup',
      input: z.object({ word: z.string(), limit: z.number().max(10), items: z.array(z.object({ id: z.number() })) }),
      execute,
    });
    const error = await rejectionOf(tool.execute({ word: 42, limit: 11, items: [{ id: 1 }, { id: 'x' }] }, ctx));
    expect(execute).not.toHaveBeenCalled();
    expect(ToolArgumentsError.isInstance(error)).toBe(true);
    expect(isSignalyardError(error, 'TOOL_ARGUMENTS_INVALID')).toBe(true);
    const e = error as ToolArgumentsError;
    expect(e.toolName).toBe('lookup');
    expect(e.issues.map((i) => i.path)).toEqual(['word', 'limit', 'items[1].id']);
    expect(e.message).toMatch(
      /^Invalid arguments for tool "lookup": word: .*expected string.*; limit: .*10.*; items\[1\]\.id: .*expected number/,
    );
  });

  it('quotes argument keys that are not plain names', async () => {
    const tool = defineTool({
      name: 'scores',
      input: z.object({ byName: z.record(z.string(), z.number()) }),
      execute: async () => null,
    });
    const error = (await rejectionOf(tool.execute({ byName: { 'Ada L.': 'high' } }, ctx))) as ToolArgumentsError;
    expect(error.issues.map((i) => i.path)).toEqual(['byName["Ada L."]']);
  });

  it('rejects arguments that are not an object at all, naming the whole', async () => {
    const error = (await rejectionOf(lookup.execute('{"word":"x"}', ctx))) as ToolArgumentsError;
    expect(error.code).toBe('TOOL_ARGUMENTS_INVALID');
    expect(error.issues).toEqual([{ path: '', message: expect.stringContaining('expected object') }]);
    expect(error.message).toContain('arguments: ');
  });

  it('runs async refinements', async () => {
    const tool = defineTool({
      name: 'user',
      input: z.object({ id: z.string().refine(async (id) => id.startsWith('u_'), 'unknown user id') }),
      execute: async ({ id }) => id,
    });
    await expect(tool.execute({ id: 'u_1' }, ctx)).resolves.toBe('u_1');
    await expect(tool.execute({ id: 'x' }, ctx)).rejects.toMatchObject({
      code: 'TOOL_ARGUMENTS_INVALID',
      issues: [{ path: 'id', message: 'unknown user id' }],
    });
  });

  it('lets an error thrown by execute through unchanged (the engine reports it to the model)', async () => {
    const boom = new Error('service down');
    const tool = defineTool({ name: 't', input: z.object({}), execute: async () => Promise.reject(boom) });
    expect(await rejectionOf(tool.execute({}, ctx))).toBe(boom);
    const sync = defineTool({
      name: 's',
      input: z.object({}),
      execute: () => {
        throw boom;
      },
    });
    expect(await rejectionOf(sync.execute({}, ctx))).toBe(boom);
  });

  it('accepts zod mini schemas', async () => {
    const tool = defineTool({ name: 'mini', input: zm.object({ n: zm.number() }), execute: async ({ n }) => n * 2 });
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] });
    await expect(tool.execute({ n: 2 }, ctx)).resolves.toBe(4);
    await expect(tool.execute({ n: '2' }, ctx)).rejects.toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID' });
  });

  it('lists at most 20 problems in the message', async () => {
    const shape = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${i}`, z.string()]));
    const tool = defineTool({ name: 'wide', input: z.object(shape), execute: async () => null });
    const error = (await rejectionOf(tool.execute({}, ctx))) as ToolArgumentsError;
    expect(error.issues).toHaveLength(25);
    expect(error.message).toContain('… and 5 more');
  });

  it('infers the argument type from the schema and returns a plain Tool', () => {
    defineTool({
      name: 'typed',
      input: z.object({ a: z.string(), b: z.number().default(1) }),
      execute: async (args, c) => {
        expectTypeOf(args).toEqualTypeOf<{ a: string; b: number }>();
        expectTypeOf(c).toEqualTypeOf<ToolContext>();
        return null;
      },
    });
    expectTypeOf(lookup).toEqualTypeOf<Tool>();
  });
});

describe('defineTool: needsApproval', () => {
  const input = z.object({ amount: z.number() }).transform(({ amount }) => ({ cents: Math.round(amount * 100) }));
  const execute = async (): Promise<string> => 'paid';

  it('leaves it out when the definition has none', () => {
    expect('needsApproval' in defineTool({ name: 'pay', input, execute })).toBe(false);
  });

  it('passes a flag through as it is', () => {
    expect(defineTool({ name: 'pay', input, execute, needsApproval: true }).needsApproval).toBe(true);
    expect(defineTool({ name: 'pay', input, execute, needsApproval: false }).needsApproval).toBe(false);
  });

  it('calls a function with the parsed (transformed) arguments and the context', async () => {
    const needs = vi.fn(({ cents }: { cents: number }) => cents >= 10_000);
    const pay = defineTool({ name: 'pay', input, execute, needsApproval: needs });
    expectTypeOf(needs).parameter(0).toEqualTypeOf<{ cents: number }>();
    const check = pay.needsApproval as (args: unknown, ctx: ToolContext) => Promise<boolean>;
    await expect(check({ amount: 150 }, ctx)).resolves.toBe(true);
    await expect(check({ amount: 1 }, ctx)).resolves.toBe(false);
    expect(needs).toHaveBeenNthCalledWith(1, { cents: 15_000 }, ctx);
  });

  it('does not call it for arguments the schema rejects: they need no approval (the call fails validation)', async () => {
    const needs = vi.fn(() => true);
    const pay = defineTool({ name: 'pay', input, execute, needsApproval: needs });
    const check = pay.needsApproval as (args: unknown, ctx: ToolContext) => Promise<boolean>;
    await expect(check({ amount: 'a lot' }, ctx)).resolves.toBe(false);
    expect(needs).not.toHaveBeenCalled();
  });
});

describe('defineTool: bad definitions', () => {
  const code = (fn: () => unknown): string | undefined => {
    const error = thrownBy(fn);
    return isSignalyardError(error) ? error.code : String(error);
  };
  const input = z.object({});
  const execute = async (): Promise<null> => null;

  it('rejects a missing or empty name, a non-schema input, a non-function execute', () => {
    expect(code(() => defineTool({ name: '', input, execute }))).toBe('TOOL_DEFINITION_INVALID');
    expect(code(() => defineTool({ name: 7 as unknown as string, input, execute }))).toBe('TOOL_DEFINITION_INVALID');
    expect(code(() => defineTool({ name: 'x', input: { type: 'object' } as unknown as typeof input, execute }))).toBe(
      'TOOL_DEFINITION_INVALID',
    );
    expect(code(() => defineTool({ name: 'x', input, execute: 'run' as unknown as typeof execute }))).toBe(
      'TOOL_DEFINITION_INVALID',
    );
    expect(code(() => defineTool({ name: 'x', description: 5 as unknown as string, input, execute }))).toBe(
      'TOOL_DEFINITION_INVALID',
    );
    expect(code(() => defineTool(null as unknown as Parameters<typeof defineTool>[0]))).toBe('TOOL_DEFINITION_INVALID');
  });

  it('rejects a needsApproval that is neither a boolean nor a function, naming it', () => {
    const error = thrownBy(() =>
      defineTool({ name: 'pay', input, execute, needsApproval: 'yes' as unknown as boolean }),
    );
    expect(isSignalyardError(error, 'TOOL_DEFINITION_INVALID')).toBe(true);
    expect((error as SignalyardError).message).toContain('needsApproval');
    expect((error as SignalyardError).message).toContain('"yes"');
  });

  it('rejects a schema that has no JSON Schema form, keeping zod error as cause', () => {
    const error = thrownBy(() => defineTool({ name: 'when', input: z.object({ at: z.date() }), execute }));
    expect(isSignalyardError(error, 'TOOL_DEFINITION_INVALID')).toBe(true);
    expect((error as SignalyardError).message).toContain('"when" has no JSON Schema form');
    expect((error as SignalyardError).cause).toBeInstanceOf(Error);
  });
});

describe('ToolArgumentsError', () => {
  class AppToolArgumentsError extends ToolArgumentsError {}

  it('isInstance matches its own instances and subclasses only', () => {
    const own = new ToolArgumentsError({ toolName: 't', issues: [{ path: 'a', message: 'bad' }] });
    expect(ToolArgumentsError.isInstance(own)).toBe(true);
    expect(ToolArgumentsError.isInstance(new AppToolArgumentsError({ toolName: 't', issues: [] }))).toBe(true);
    expect(SignalyardError.isInstance(own)).toBe(true);
    expect(ToolArgumentsError.isInstance(new SignalyardError({ code: 'TOOL_ARGUMENTS_INVALID', message: 'm' }))).toBe(
      false,
    );
    expect(ToolArgumentsError.isInstance(new Error('x'))).toBe(false);
    expect(ToolArgumentsError.isInstance(null)).toBe(false);
    expect(own.name).toBe('ToolArgumentsError');
    expect(own.message).toBe('Invalid arguments for tool "t": a: bad');
    expect(Object.isFrozen(own.issues)).toBe(true);
  });
});
