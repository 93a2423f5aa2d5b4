// The guides cannot drift from the code: the configuration reference is checked against the
// schemas, and the code the guides show is run.
import { readFileSync } from 'node:fs';
import { crewConfigKeyPaths, routingConfigSchema, routingTomlKeyPaths } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const doc = (name: string): string => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

/** The camelCase keys the code form accepts, from the zod schema itself. */
function schemaKeys(schema: unknown): string[] {
  const out = new Set<string>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const n = node as {
      properties?: Record<string, unknown>;
      items?: unknown;
      additionalProperties?: unknown;
      anyOf?: unknown[];
    };
    for (const [key, child] of Object.entries(n.properties ?? {})) {
      out.add(key);
      walk(child);
    }
    walk(n.items);
    walk(n.additionalProperties);
    for (const o of n.anyOf ?? []) walk(o);
  };
  walk(z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }));
  return [...out];
}

describe('docs/configuration.md', () => {
  const reference = doc('configuration.md');

  it.each(crewConfigKeyPaths())('documents the crew.yaml key %s', (path) => {
    expect(reference).toContain(`| \`${path}\` |`);
  });

  it.each(routingTomlKeyPaths())('documents the routing TOML key %s', (path) => {
    expect(reference).toContain(`| \`${path}\` |`);
  });

  it.each(schemaKeys(routingConfigSchema))(
    'documents the routing key %s of the code form (routingConfigSchema)',
    (key) => {
      expect(reference).toContain(`\`${key}\``);
    },
  );

  it('documents nothing the schemas do not accept', () => {
    const known = new Set([...crewConfigKeyPaths(), ...routingTomlKeyPaths()]);
    const documented = [...reference.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect(documented.filter((k) => k !== undefined && !known.has(k))).toEqual([]);
  });
});

/** The first ```ts block of a markdown file that contains `marker`. */
function codeBlock(markdown: string, marker: string): string {
  for (const m of markdown.matchAll(/```ts\n([\s\S]*?)```/g)) if (m[1]?.includes(marker)) return m[1];
  throw new Error(`no ts block containing ${marker}`);
}

/** Runs a guide's code block as a module and returns what it printed. */
async function runBlock(code: string, name: string): Promise<string[]> {
  const { mkdirSync, writeFileSync, rmSync } = await import('node:fs');
  const dir = new URL('./.doc-blocks/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${name}-${process.pid}.ts`, dir);
  writeFileSync(file, code);
  const printed: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => {
    printed.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  };
  try {
    await import(/* @vite-ignore */ file.href);
  } finally {
    console.log = original;
    rmSync(file, { force: true });
  }
  return printed;
}

describe('the code in the guides runs as they say', () => {
  it('README.md: the taste of the Runner', async () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    expect(await runBlock(codeBlock(readme, 'createRunner'), 'readme')).toEqual(['completed', 'rejected']);
  });

  it('docs/getting-started.md: your first Runner', async () => {
    const printed = await runBlock(codeBlock(doc('getting-started.md'), 'createRunner'), 'getting-started');
    expect(printed).toEqual(['completed rejected {"type":"reject","reason":"placing_order"}']);
  });
});
