// fast-check arbitraries for session keys whose ids come from full Unicode, with `:`, `%`,
// escape look-alikes, mixed case, keyword look-alikes and NFD forms mixed in.
import fc from 'fast-check';
import { SessionKey, SessionKeyError, type DmScope, type PeerKind, type TaskType } from '@signalyard/sessions';

/** Pieces that stress escaping, case folding and normalisation. */
const TRICKY = [
  ':',
  '%',
  '%3a',
  '%3A',
  '%25',
  '%41',
  '::',
  'A',
  'a',
  'Z',
  'É',
  'é',
  'E\u0301',
  'e\u0301',
  'İ',
  'ı',
  'Σ',
  'σ',
  'ς',
  'ß',
  'ẞ',
  'W\u030a',
  'ẘ',
  'Å',
  'A\u030a',
  '\u212b',
  'ﬀ',
  '𐐀',
  '𐐨',
  '🙂',
  '你好',
  ' ',
  '\t',
  'dm',
  'thread',
  'subagent',
  'cron',
  'group',
  'agent',
  'main',
  '-',
  '_',
  '.',
];

/** Any id text: full Unicode code points, tricky pieces, mixed case, sometimes decomposed (NFD). */
export const anyIdText: fc.Arbitrary<string> = fc
  .tuple(
    fc.array(
      fc.oneof(
        fc.constantFrom(...TRICKY),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
        fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 6 }),
      ),
      { minLength: 1, maxLength: 6 },
    ),
    fc.constantFrom<'none' | 'NFD' | 'NFKD'>('none', 'NFD', 'NFKD'),
  )
  .map(([parts, form]) => {
    const s = parts.join('');
    return form === 'none' ? s : s.normalize(form);
  });

/** The characters no id may hold once trimmed (decisions-wave3 §12): C0 and C1 controls, bidirectional controls. */
// eslint-disable-next-line no-control-regex -- the control characters are what it matches
export const FORBIDDEN_ID_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Id text the factories accept (something left after NFC + trim, holding no control character). */
export const idText: fc.Arbitrary<string> = anyIdText.filter((s) => {
  const id = s.normalize('NFC').trim();
  return id !== '' && !FORBIDDEN_ID_CHARACTER.test(id);
});

/** Agent-id text: mostly messy text with at least one valid character. */
const agentText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('main', 'work', 'Work Bot', 'a', 'x_y', 'vip-agent'),
  fc.tuple(anyIdText, fc.stringMatching(/^[A-Za-z0-9_]{1,8}$/), anyIdText).map(([a, b, c]) => `${a}${b}${c}`),
);

/** Channel text: valid names with random case and padding. */
const channelText: fc.Arbitrary<string> = fc
  .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,10}$/), fc.boolean(), fc.boolean())
  .map(([c, upper, pad]) => {
    const s = upper ? c.toUpperCase() : c;
    return pad ? ` ${s}\t` : s;
  });

const peerKind = fc.constantFrom<PeerKind>('group', 'channel', 'thread');
const taskType = fc.constantFrom<TaskType>('cron', 'webhook', 'scheduled');
const dmScope = fc.constantFrom<DmScope>('per-peer', 'per-channel-peer', 'main');

/** Builds a key, or `null` when the factory rightly rejects the arguments (e.g. a key over 1,024 characters). */
function attempt(build: () => SessionKey): SessionKey | null {
  try {
    return build();
  } catch (error) {
    if (SessionKeyError.isInstance(error)) return null;
    throw error;
  }
}

/** A root (non-subagent) key from any factory, with ids drawn from `id`. */
function rootKey(
  id: fc.Arbitrary<string> = idText,
  agent: fc.Arbitrary<string> = agentText,
): fc.Arbitrary<SessionKey | null> {
  return fc.oneof(
    fc.tuple(agent, fc.option(id, { nil: undefined })).map(([a, k]) => attempt(() => SessionKey.main(a, k))),
    fc
      .tuple(agent, channelText, id, dmScope, fc.boolean())
      .map(([a, c, p, s, cs]) => attempt(() => SessionKey.directMessage(a, c, p, s, { caseSensitive: cs }))),
    fc
      .tuple(agent, channelText, peerKind, id, fc.option(id, { nil: undefined }), fc.boolean())
      .map(([a, c, k, p, t, cs]) =>
        attempt(() =>
          SessionKey.group(a, c, k, p, t === undefined ? { caseSensitive: cs } : { threadId: t, caseSensitive: cs }),
        ),
      ),
    fc.tuple(agent, taskType, id).map(([a, t, i]) => attempt(() => SessionKey.task(a, t, i))),
    fc.tuple(agent, id).map(([a, i]) => attempt(() => SessionKey.ephemeral(a, i))),
  );
}

/** Any key: a root key under 0–3 subagent layers. */
export function anyKey(
  id: fc.Arbitrary<string> = idText,
  agent: fc.Arbitrary<string> = agentText,
): fc.Arbitrary<SessionKey | null> {
  const layers = fc.oneof(
    { arbitrary: fc.constant<string[]>([]), weight: 3 },
    { arbitrary: fc.array(id, { minLength: 1, maxLength: 3 }), weight: 2 },
  );
  return fc.tuple(rootKey(id, agent), layers).map(([root, subs]) => {
    let key = root;
    for (const s of subs) {
      if (key === null) return null;
      const parent: SessionKey = key;
      key = attempt(() => SessionKey.subagent(parent, s));
    }
    return key;
  });
}

/** Keys over a tiny alphabet of delimiter and keyword look-alikes, so that a broken escape would collide. */
export const nearCollisionKey: fc.Arbitrary<SessionKey | null> = anyKey(
  fc
    .array(fc.constantFrom(':', '%', '3a', '25', 'A', 'a', 'thread', 'subagent', 'dm', 'group', 't1'), {
      minLength: 1,
      maxLength: 4,
    })
    .map((p) => p.join('')),
  fc.constantFrom('main', 'a', 'A'),
);

/** Removes the channel of a per-peer DM (the string does not carry it), at every nesting level. */
export function withoutPerPeerChannel(key: SessionKey): SessionKey {
  if (key.kind === 'subagent') return { ...key, parent: withoutPerPeerChannel(key.parent) };
  if (key.kind === 'direct_message' && key.dmScope === 'per-peer') {
    const { channel: _channel, ...rest } = key;
    return rest;
  }
  return key;
}
