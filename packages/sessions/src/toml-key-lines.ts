type Seg = string | number;

/** A node of the key tree: the line a key (or table header, or array item) is on, and its children. */
interface KeyNode {
  line: number | undefined;
  /** For an array of tables: the index of its current element. */
  arrayIndex: number | undefined;
  readonly children: Map<Seg, KeyNode>;
}

/** The lines of a TOML document's keys, as a tree walked one segment at a time (linear in the document). */
export interface KeyLines {
  readonly root: KeyNode;
}

function node(): KeyNode {
  return { line: undefined, arrayIndex: undefined, children: new Map() };
}

function child(parent: KeyNode, seg: Seg): KeyNode {
  let c = parent.children.get(seg);
  if (c === undefined) {
    c = node();
    parent.children.set(seg, c);
  }
  return c;
}

/**
 * Finds the 1-based line of every key, table header and array item in a (syntactically valid)
 * TOML document, so config problems found after parsing can point at a line. Tables and arrays
 * of tables (`[[x]]`, counted per parent), dotted keys, quoted keys, inline tables, arrays,
 * comments and all four string forms are understood. Time and memory are linear in the
 * document: each key segment is one step down a tree. Never throws: on anything unexpected it
 * returns what it found so far.
 */
export function locateTomlKeys(source: string): KeyLines {
  const root = node();
  try {
    new Scanner(source, root).document();
  } catch {
    // Keep the positions found so far.
  }
  return { root };
}

/** The line of `path`, or of its nearest enclosing key that has one. */
export function lineOf(lines: KeyLines, path: readonly PropertyKey[]): number | undefined {
  let at: KeyNode | undefined = lines.root;
  let found: number | undefined;
  for (const seg of path) {
    at = typeof seg === 'symbol' ? undefined : at.children.get(seg);
    if (at === undefined) break;
    if (at.line !== undefined) found = at.line;
  }
  return found;
}

class Scanner {
  #pos = 0;
  #line = 1;
  #table: KeyNode;

  constructor(
    private readonly s: string,
    private readonly root: KeyNode,
  ) {
    this.#table = root;
  }

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

  #record(at: KeyNode, line: number, always: boolean): void {
    if (always || at.line === undefined) at.line = line;
  }

  #header(): void {
    const line = this.#line;
    const isArray = this.s.startsWith('[[', this.#pos);
    this.#pos += isArray ? 2 : 1;
    const keys = this.#key();
    this.#skipBlank(false);
    this.#pos += isArray ? 2 : 1; // ']]' or ']'
    let at = this.root;
    keys.forEach((k, i) => {
      at = child(at, k);
      if (isArray && i === keys.length - 1) {
        const index = (at.arrayIndex ?? -1) + 1;
        at.arrayIndex = index;
        this.#record(at, line, false);
        at = child(at, index);
      } else if (at.arrayIndex !== undefined) {
        at = child(at, at.arrayIndex);
      }
      this.#record(at, line, false);
    });
    this.#table = at;
  }

  #keyValue(base: KeyNode): void {
    const line = this.#line;
    const keys = this.#key();
    let at = base;
    for (const k of keys) {
      at = child(at, k);
      this.#record(at, line, false);
    }
    this.#record(at, line, true);
    this.#skipBlank(false);
    if (this.s[this.#pos] !== '=') throw new Error('expected =');
    this.#pos++;
    this.#skipBlank(false);
    this.#value(at);
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

  #value(at: KeyNode): void {
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
        this.#keyValue(at);
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
        const item = child(at, index);
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
