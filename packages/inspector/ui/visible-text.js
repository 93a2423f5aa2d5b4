// Characters that change how text looks without being seen: C0 and C1 controls (ESC starts a
// terminal sequence, a newline fakes a row) and the bidirectional controls (U+202E shows a key
// reversed). The page shows each as a visible escape, `\u202E`, never raw. Pure: no DOM, so
// the tests run it in Node too.

/* eslint-disable no-control-regex -- matching control characters is the point */
const CONTROLS = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;
// The same without line feed and tab, which a block of text shows as line breaks and indents.
const CONTROLS_IN_LINES =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;
/* eslint-enable no-control-regex */

function escape(char) {
  return `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** `text` for one line (a key, an id, a name): every control character escaped as `\uXXXX`. */
export function visible(text) {
  return String(text).replace(CONTROLS, escape);
}

/** `text` for a block of lines (a message, a tool's arguments): the same, keeping line feeds and tabs. */
export function visibleLines(text) {
  return String(text).replace(CONTROLS_IN_LINES, escape);
}
