import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@signalyard/core';
import { configFilePath } from '@signalyard/core/internal';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configFilePath', () => {
  it('returns a path string as it is', () => {
    expect(configFilePath('crew.yaml', fileURLToPath, 'a crew.yaml')).toBe('crew.yaml');
    expect(configFilePath('/etc/signalyard/routing.toml', fileURLToPath, 'x')).toBe('/etc/signalyard/routing.toml');
  });

  it('turns a file: URL into its path', () => {
    const url = pathToFileURL('/tmp/dir with space/crew.yaml');
    expect(configFilePath(url, fileURLToPath, 'a crew.yaml')).toBe('/tmp/dir with space/crew.yaml');
  });

  it('accepts a URL from another realm (an object with href and protocol)', () => {
    const foreign = { href: 'file:///tmp/crew.yaml', protocol: 'file:' };
    expect(configFilePath(foreign, fileURLToPath, 'a crew.yaml')).toBe('/tmp/crew.yaml');
  });

  it.each([
    ['a number (never taken for a file descriptor)', 3, '3'],
    ['undefined (an unset variable)', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a Buffer', Buffer.from('crew.yaml'), '"type":"Buffer"'],
    ['a plain object', { path: 'crew.yaml' }, '{"path":"crew.yaml"}'],
    ['an empty string', '', '""'],
  ])('refuses %s with a ConfigError naming the value', (_label, value, shown) => {
    const error = configError(() => configFilePath(value, fileURLToPath, 'a crew.yaml'));

    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(shown);
    expect(error.message).toContain('a crew.yaml');
    expect(error.message).toContain('expected a file path (a non-empty string) or a file: URL');
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatchObject({ path: '' });
    expect(error.problems[0]?.message).toContain(shown);
    expect(error.file).toBeUndefined();
  });

  it('refuses a URL of another scheme before anything is read', () => {
    let called = false;
    const error = configError(() =>
      configFilePath(
        new URL('https://example.com/crew.yaml'),
        (u) => ((called = true), fileURLToPath(u)),
        'a crew.yaml',
      ),
    );

    expect(called).toBe(false);
    expect(error.message).toContain('"https://example.com/crew.yaml"');
    expect(error.message).toContain('https: URL names no file');
  });

  it('refuses a file: URL that names no local path, with the reason and the cause', () => {
    const error = configError(() => configFilePath(new URL('file://remote-host/crew.yaml'), fileURLToPath, 'x'));

    expect(error.message).toContain('"file://remote-host/crew.yaml"');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('refuses an object whose href is not a URL', () => {
    const error = configError(() => configFilePath({ href: 'not a url', protocol: 'file:' }, fileURLToPath, 'x'));
    expect(error.message).toContain('expected a file path');
  });
});
