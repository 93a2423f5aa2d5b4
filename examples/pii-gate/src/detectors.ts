/** What a detector found in a text. */
export interface Finding {
  readonly detector: string;
  readonly start: number;
  readonly end: number;
}

/** A named way of finding personal data in a text. */
export interface Detector {
  readonly name: string;
  /** Every match, in order. Keep it fast on long texts: it runs on every user message. */
  find(text: string): Finding[];
}

function regexDetector(name: string, pattern: RegExp, accept: (match: string) => boolean = () => true): Detector {
  return {
    name,
    find(text) {
      const out: Finding[] = [];
      for (const m of text.matchAll(new RegExp(pattern.source, 'g' + pattern.flags.replace('g', '')))) {
        if (accept(m[0])) out.push({ detector: name, start: m.index, end: m.index + m[0].length });
      }
      return out;
    },
  };
}

/** Luhn checksum over the digits of `text` (spaces and dashes ignored). */
export function luhnValid(text: string): boolean {
  const digits = text.replace(/[ -]/g, '');
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length >= 13 && sum % 10 === 0;
}

/** Payment card numbers: 13–19 digits, optionally grouped by spaces or dashes, passing Luhn. */
export const cardNumber: Detector = regexDetector('card_number', /\b\d(?:[ -]?\d){12,18}\b/, luhnValid);

/** API keys and tokens that announce themselves (sk-…, ghp_…, AKIA…). */
export const secretToken: Detector = regexDetector(
  'secret_token',
  /\b(?:sk-[A-Za-z0-9]{20,}|ghp_[A-Za-z0-9]{36}|AKIA[0-9A-Z]{16})\b/,
);

/** E-mail addresses. */
export const email: Detector = regexDetector(
  'email',
  /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/,
);

/** International phone numbers written with a leading +. */
export const phone: Detector = regexDetector('phone', /\+\d(?:[ -]?\d){7,14}\b/);

/** Replaces every finding with `[REDACTED:<detector>]`. Overlapping findings are merged. */
export function redact(text: string, findings: readonly Finding[]): string {
  const sorted = [...findings].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const f of sorted) {
    if (f.start < at) continue;
    out += `${text.slice(at, f.start)}[REDACTED:${f.detector}]`;
    at = f.end;
  }
  return out + text.slice(at);
}
