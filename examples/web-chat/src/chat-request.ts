// What the chat API accepts, checked with zod before anything reaches the runner: a malformed
// body (`parts: 'hello'`, `messages: [null]`, a text that is an object) is a 400 naming the
// field and what was expected — never a TypeError from deep inside, never `"[object Object]"`
// stored as a message.
import { z } from 'zod';
import { HttpError } from './http-rules.js';

/** The longest user message the desk takes, in UTF-16 code units. */
const MAX_TEXT = 8000;

/** A chat id: the page makes one with `crypto.randomUUID()`. */
export const chatIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a chat id of 1 to 64 letters, digits, - or _');

/** One part of a `UIMessage`: any AI SDK part type; a `text` part's `text` must be a string. */
const partSchema = z.looseObject({ type: z.string().min(1, 'expected a part type') }).superRefine((part, ctx) => {
  if (part.type === 'text' && typeof (part as { text?: unknown }).text !== 'string') {
    ctx.addIssue({ code: 'custom', path: ['text'], message: 'expected the text of a text part, a string' });
  }
});

const messageSchema = z.looseObject({
  id: z.string(),
  role: z.enum(['user', 'assistant', 'system']),
  parts: z.array(partSchema).max(1000),
});

/** `POST /api/chat`: what the AI SDK's `DefaultChatTransport` sends (it adds `trigger`, `messageId`, …). */
const chatBodySchema = z.looseObject({
  id: chatIdSchema,
  messages: z.array(messageSchema).min(1, 'expected at least one message').max(500),
});

/** `POST /api/review/decisions`: a reviewer's decisions on one chat's pending approvals. */
const decisionsBodySchema = z.strictObject({
  chatId: chatIdSchema,
  decisions: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(200),
        approved: z.boolean(),
        reason: z.string().max(1000).optional(),
      }),
    )
    .min(1, 'expected at least one decision')
    .max(100),
});

/** A zod issue path as `messages[0].parts[1].text`. */
function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : `${out === '' ? '' : '.'}${String(seg)}`;
  return out === '' ? 'the body' : out;
}

/** A value as a problem names it: short JSON, or what it is. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing (it is missing)';
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) return typeof value;
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** A wrong type names what was expected and what came, as JSON: `expected array, got "hello"`. */
const typeProblem: z.core.$ZodErrorMap = (issue) =>
  issue.code === 'invalid_type' ? `expected ${issue.expected}, got ${shown(issue.input)}` : undefined;

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const result = schema.safeParse(body, { error: typeProblem });
  if (result.success) return result.data;
  const problems = result.error.issues.slice(0, 5).map((i) => `${pathText(i.path)}: ${i.message}`);
  throw new HttpError(400, `Invalid ${what}: ${problems.join('; ')}`);
}

/** What a valid `POST /api/chat` asks for: a new user message, or (refused) answers to approval requests. */
export type ChatRequest =
  | { readonly kind: 'message'; readonly chatId: string; readonly text: string }
  | { readonly kind: 'approval_answers'; readonly chatId: string };

/** Reads a `POST /api/chat` body. @throws HttpError 400 naming what is wrong. */
export function readChatRequest(body: unknown): ChatRequest {
  const { id: chatId, messages } = parse(chatBodySchema, body, 'chat request');
  const last = messages[messages.length - 1];
  if (last?.role !== 'user') {
    if (last?.role === 'assistant') return { kind: 'approval_answers', chatId };
    throw new HttpError(400, 'Expected the last message to be the user’s');
  }
  const text = last.parts.flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : [])).join('');
  if (text.trim() === '') throw new HttpError(400, 'The last user message has no text');
  if (text.length > MAX_TEXT) throw new HttpError(400, `The message is longer than ${MAX_TEXT} characters`);
  return { kind: 'message', chatId, text };
}

/** A reviewer's decisions, checked. */
export type ReviewDecisions = z.infer<typeof decisionsBodySchema>;

/** Reads a `POST /api/review/decisions` body. @throws HttpError 400 naming what is wrong. */
export function readReviewDecisions(body: unknown): ReviewDecisions {
  return parse(decisionsBodySchema, body, 'decisions');
}
