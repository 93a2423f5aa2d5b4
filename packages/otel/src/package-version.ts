import { readFileSync } from 'node:fs';

let cached: string | undefined | null = null;

/**
 * The version of `@signalyard/otel`, read once from its package.json (the instrumentation
 * scope's version on the default tracer); `undefined` when the file cannot be found, as in a
 * bundle that moved the code away from it.
 */
export function packageVersion(): string | undefined {
  if (cached === null) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      cached = pkg.name === '@signalyard/otel' && typeof pkg.version === 'string' ? pkg.version : undefined;
    } catch {
      cached = undefined;
    }
  }
  return cached;
}
