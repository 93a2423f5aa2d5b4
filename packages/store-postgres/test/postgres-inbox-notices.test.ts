import { describe, expect, it } from 'vitest';
import { NoticeFilter } from '../src/postgres-inbox-notices.js';

function filter(): [NoticeFilter, string[]] {
  const passed: string[] = [];
  return [new NoticeFilter((key) => passed.push(key)), passed];
}

describe('NoticeFilter (the entry notices a PostgresInbox passes on)', () => {
  it('passes a notice when nothing of its key was read here', () => {
    const [f, passed] = filter();
    f.entry('k', '3');
    expect(passed).toEqual(['k']);
  });

  it('drops notices of entries a read returned, passes later ones', () => {
    const [f, passed] = filter();
    f.reading('k')('5');
    f.entry('k', '4');
    f.entry('k', '5');
    expect(passed).toEqual([]);
    f.entry('k', '6');
    f.entry('other', '1');
    expect(passed).toEqual(['k', 'other']);
  });

  it('holds notices back while a read of their key is in flight: one notice after it when it missed any, none when it covered them', () => {
    const [f, passed] = filter();
    const answered = f.reading('k');
    f.entry('k', '1');
    f.entry('k', '2');
    f.entry('j', '1'); // another key: not held
    expect(passed).toEqual(['j']);
    answered('2'); // the read returned both
    expect(passed).toEqual(['j']);
    const again = f.reading('k');
    f.entry('k', '3');
    f.entry('k', '4');
    again('3'); // it returned 3, not 4: the holder must read once more
    expect(passed).toEqual(['j', 'k']);
  });

  it('waits for every read in flight of a key; a failed read (nothing returned) lets held notices through', () => {
    const [f, passed] = filter();
    const first = f.reading('k');
    const second = f.reading('k');
    f.entry('k', '7');
    first(undefined);
    expect(passed).toEqual([]);
    second(undefined);
    second('9'); // answering twice changes nothing
    expect(passed).toEqual(['k']);
  });

  it('forgets a released key: its notices pass again', () => {
    const [f, passed] = filter();
    f.reading('k')('5');
    f.forget('k');
    f.entry('k', '5');
    expect(passed).toEqual(['k']);
  });
});
