import * as core from '@signalyard/core';
import * as crew from '@signalyard/crew';
import * as fsm from '@signalyard/fsm';
import * as pipeline from '@signalyard/pipeline';
import * as router from '@signalyard/router';
import * as sessions from '@signalyard/sessions';
import * as meta from 'signalyard';
import { describe, expect, it } from 'vitest';

const packages = {
  '@signalyard/core': core,
  '@signalyard/router': router,
  '@signalyard/fsm': fsm,
  '@signalyard/sessions': sessions,
  '@signalyard/crew': crew,
  '@signalyard/pipeline': pipeline,
};

describe('the meta-package', () => {
  it.each(Object.entries(packages))('re-exports every runtime export of %s, as the same value', (_name, mod) => {
    const missing = Object.keys(mod).filter((key) => !(key in meta));
    expect(missing).toEqual([]);
    for (const key of Object.keys(mod))
      expect((meta as Record<string, unknown>)[key]).toBe((mod as Record<string, unknown>)[key]);
  });

  it('adds the Runner', () => {
    expect(typeof meta.createRunner).toBe('function');
    expect(typeof meta.RunnerError.isInstance).toBe('function');
  });
});
