import { describe, expect, it } from 'vitest';
import { isReservedName, reservedNameProblem } from '@signalyard/core/internal';

describe('reserved config names', () => {
  it('__proto__ and constructor are reserved, with one message naming what the name was for', () => {
    expect(isReservedName('__proto__')).toBe(true);
    expect(isReservedName('constructor')).toBe(true);
    expect(reservedNameProblem('__proto__', 'a parallel group name')).toBe(
      '"__proto__" is a reserved name and cannot be a parallel group name',
    );
    expect(reservedNameProblem('constructor', 'an identity-link name')).toBe(
      '"constructor" is a reserved name and cannot be an identity-link name',
    );
  });

  it('other Object.prototype names, other spellings and ordinary names are not reserved', () => {
    for (const name of [
      'toString',
      'hasOwnProperty',
      'prototype',
      '__PROTO__',
      'Constructor',
      ' __proto__',
      'team',
      '',
    ]) {
      expect(isReservedName(name)).toBe(false);
      expect(reservedNameProblem(name, 'a name')).toBeUndefined();
    }
  });
});
