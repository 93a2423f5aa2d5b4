/** The longest formatted session key, in characters. */
export const MAX_SESSION_KEY_LENGTH = 1024;

/** How many subagent levels may sit above a root key (a 9th is rejected). */
export const MAX_SUBAGENT_DEPTH = 8;

/** `n` with thousands separators, for messages (`1,024`). */
export const count = (n: number): string => n.toLocaleString('en-US');
