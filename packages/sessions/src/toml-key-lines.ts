import { formatPath } from './routing-config.js';

type Seg = string | number;

/**
 * Finds the 1-based line of every key, table header and array item in a (syntactically valid)
 * TOML document, keyed by its formatted path (`routing.bindings[2].match.peer.id`), so config
 * problems found after parsing can point at a line. Tables and arrays of tables (`[[x]]`, counted
 * per parent), dotted keys, quoted keys, inline tables, arrays, comments and all four string
 * forms are understood. Never throws: on anything unexpected it returns what it found so far.
 */
export function locateTomlKeys(source: string): Map<string, number> {
  const found = new Map<string, number>();
  try {
    new Scanner(source, found).document();
  } catch {
    // Keep the positions found so far.
  }
  return found;
}

/** The line of `path`, or of its nearest enclosing key that has one. */
export function lineOf(lines: ReadonlyMap<string, number>, path: readonly Seg[]): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const line = lines.get(formatPath(path.slice(0, n)));
    if (line !== undefined) return line;
  }
  return undefined;
}

class Scanner {
  #pos = 0;
  #line = 1;
  #table: Seg[] = [];
  /** Formatted path of an array of tables → index of its current element. */
  readonly #arrays = new Map<string, number>();

  constructor(
    private readonly s: string,
    private readonly found: Map<string, number>,
  ) {}

  document(): void {
    while (this.#pos < this.s.length) {
      this.#skipBlank(true);
      if (this.#pos >= this.s.length) break;
      const c = this.s[this.#pos];
      if (c === '[') this.#header();
      else this.#keyValue(this.#table);
      this.#skipBlank(false);
      this.#skipComment();
      if (this.s[this.#pos] === '\r') this.#pos++;
      if (this.s[this.#pos] === '\n') {
        this.#pos++;
        this.#line++;
      } else if (this.#pos < this.s.length) {
        throw new Error('unexpected content'); // not valid TOML after all
      }
    }
  }

  #record(path: readonly Seg[], line: number, always: boolean): void {
    const key = formatPath(path);
    if (always || !this.found.has(key)) this.found.set(key, line);
  }

  #header(): void {
    const line = this.#line;
    const isArray = this.s.startsWith('[[', this.#pos);
    this.#pos += isArray ? 2 : 1;
    const keys = this.#key();
    this.#skipBlank(false);
    this.#pos += isArray ? 2 : 1; // ']]' or ']'
    const path: Seg[] = [];
    keys.forEach((k, i) => {
      path.push(k);
      const formatted = formatPath(path);
      if (isArray && i === keys.length - 1) {
        const index = (this.#arrays.get(formatted) ?? -1) + 1;
        this.#arrays.set(formatted, index);
        this.#record(path, line, false);
        path.push(index);
      } else {
        const current = this.#arrays.get(formatted);
        if (current !== undefined) path.push(current);
      }
      this.#record(path, line, false);
    });
    this.#table = path;
  }

  #keyValue(base: readonly Seg[]): void {
    const line = this.#line;
    const keys = this.#key();
    const path = [...base];
    for (const k of keys) {
      path.push(k);
      this.#record(path, line, false);
    }
    this.#record(path, line, true);
    this.#skipBlank(false);
    if (this.s[this.#pos] !== '=') throw new Error('expected =');
    this.#pos++;
    this.#skipBlank(false);
    this.#value(path);
  }

  /** A dotted key: bare or quoted segments separated by dots. */
  #key(): string[] {
    const keys: string[] = [];
    for (;;) {
      this.#skipBlank(false);
      const c = this.s[this.#pos];
      if (c === '"') keys.push(this.#basicString());
      else if (c === "'") keys.push(this.#literalString());
      else {
        const start = this.#pos;
        while (this.#pos < this.s.length && /[A-Za-z0-9_-]/.test(this.s[this.#pos] as string)) this.#pos++;
        if (this.#pos === start) throw new Error('expected a key');
        keys.push(this.s.slice(start, this.#pos));
      }
      this.#skipBlank(false);
      if (this.s[this.#pos] !== '.') return keys;
      this.#pos++;
    }
  }

  #value(path: readonly Seg[]): void {
    const s = this.s;
    const c = s[this.#pos];
    if (c === '"') {
      if (s.startsWith('"""', this.#pos)) this.#multiline('"""', true);
      else this.#basicString();
    } else if (c === "'") {
      if (s.startsWith("'''", this.#pos)) this.#multiline("'''", false);
      else this.#literalString();
    } else if (c === '{') {
      this.#pos++;
      for (;;) {
        this.#skipBlank(true);
        if (s[this.#pos] === '}') {
          this.#pos++;
          return;
        }
        this.#keyValue(path);
        this.#skipBlank(true);
        if (s[this.#pos] === ',') this.#pos++;
      }
    } else if (c === '[') {
      this.#pos++;
      for (let index = 0; ; index++) {
        this.#skipBlank(true);
        this.#skipComments();
        if (s[this.#pos] === ']') {
          this.#pos++;
          return;
        }
        const item = [...path, index];
        this.#record(item, this.#line, true);
        this.#value(item);
        this.#skipBlank(true);
        this.#skipComments();
        if (s[this.#pos] === ',') this.#pos++;
      }
    } else {
      const start = this.#pos;
      while (this.#pos < s.length && !',]}\n#'.includes(s[this.#pos] as string)) this.#pos++;
      if (this.#pos === start) throw new Error('expected a value');
    }
  }

  #basicString(): string {
    const s = this.s;
    this.#pos++; // opening quote
    let out = '';
    while (this.#pos < s.length && s[this.#pos] !== '"') {
      const c = s[this.#pos] as string;
      if (c === '\n') throw new Error('newline in string');
      if (c === '\\') {
        const e = s[this.#pos + 1];
        const simple: Record<string, string> = {
          b: '\b',
          t: '\t',
          n: '\n',
          f: '\f',
          r: '\r',
          e: '\u001b',
          '"': '"',
          '\\': '\\',
        };
        if (e === 'u' || e === 'U' || e === 'x') {
          const len = e === 'u' ? 4 : e === 'U' ? 8 : 2;
          out += String.fromCodePoint(parseInt(s.slice(this.#pos + 2, this.#pos + 2 + len), 16));
          this.#pos += 2 + len;
        } else {
          out += simple[e as string] ?? '';
          this.#pos += 2;
        }
        continue;
      }
      out += c;
      this.#pos++;
    }
    this.#pos++; // closing quote
    return out;
  }

  #literalString(): string {
    const end = this.s.indexOf("'", this.#pos + 1);
    if (end < 0) throw new Error('unterminated string');
    const out = this.s.slice(this.#pos + 1, end);
    this.#pos = end + 1;
    return out;
  }

  #multiline(delimiter: string, escapes: boolean): void {
    const s = this.s;
    this.#pos += 3;
    while (this.#pos < s.length) {
      const c = s[this.#pos];
      if (escapes && c === '\\') {
        if (s[this.#pos + 1] === '\n') this.#line++;
        this.#pos += 2;
        continue;
      }
      if (s.startsWith(delimiter, this.#pos)) {
        this.#pos += 3;
        // Up to two more quote characters may belong to the content.
        while (s[this.#pos] === delimiter[0]) this.#pos++;
        return;
      }
      if (c === '\n') this.#line++;
      this.#pos++;
    }
  }

  /** Skips spaces and tabs, and with `newlines` also line breaks and comments. */
  #skipBlank(newlines: boolean): void {
    const s = this.s;
    while (this.#pos < s.length) {
      const c = s[this.#pos];
      if (c === ' ' || c === '\t' || c === '\r') this.#pos++;
      else if (newlines && c === '\n') {
        this.#pos++;
        this.#line++;
      } else if (newlines && c === '#') this.#skipComment();
      else return;
    }
  }

  #skipComments(): void {
    this.#skipBlank(true);
  }

  #skipComment(): void {
    if (this.s[this.#pos] !== '#') return;
    while (this.#pos < this.s.length && this.s[this.#pos] !== '\n') this.#pos++;
  }
}
