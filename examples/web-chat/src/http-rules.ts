// The web chat's HTTP rules, the inspector's: a `Host` header outside the allowed names is
// refused (DNS rebinding: a page on another site whose name resolves to 127.0.0.1 could read
// transcripts); a POST must be JSON and must not come from another site's page (`Origin`); a
// body is read up to a limit and parsed; a failure is answered with its status and a clear
// message, never an internal one.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An HTTP failure answered as `{ error: message }` with `status`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

const MAX_BODY = 1 << 20;

/** The loopback names with the port, and the listening host when it is a specific address. */
export function loopbackHosts(port: number, host: string): string[] {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  if (host !== '0.0.0.0' && host !== '::') hosts.push(`${host.includes(':') ? `[${host}]` : host}:${port}`);
  return hosts;
}

function hostOfOrigin(origin: string): string {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return ''; // `Origin: null` (a sandboxed frame, a file) is no allowed host either
  }
}

/**
 * @throws HttpError 403 for a `Host` outside `allowedHosts`, or a POST whose `Origin` is another
 * site's; 415 for a POST whose body is not declared JSON.
 */
export function checkRequest(req: IncomingMessage, allowedHosts: ReadonlySet<string>): void {
  const host = (req.headers.host ?? '').toLowerCase();
  if (!allowedHosts.has(host)) {
    throw new HttpError(
      403,
      `Host ${JSON.stringify(host)} is not allowed: open the chat at ${[...allowedHosts].join(', ')} (or pass allowedHosts)`,
    );
  }
  if (req.method !== 'POST') return;
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedHosts.has(hostOfOrigin(origin))) {
    throw new HttpError(403, `A request from ${JSON.stringify(origin)} may not post to this chat`);
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type !== 'application/json') {
    throw new HttpError(415, `Expected a JSON body (content-type application/json), got ${JSON.stringify(type)}`);
  }
}

/** The request's body as JSON (at most 1 MiB). @throws HttpError 413, 400. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, `The body is larger than ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'Expected a JSON body');
  }
}

/** `text` %-decoded. @throws HttpError 400 when it holds a bad %-escape (`%E0%A4%A`). */
export function decodePathPart(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, `The ${what} in the address is not valid: ${JSON.stringify(text)} has a bad %-escape`);
  }
}

/** Answers a failed request: its status and message for an {@link HttpError}; a plain 500 (logged, not shown) otherwise. */
export function sendFailure(res: ServerResponse, error: unknown): void {
  const known = error instanceof HttpError;
  if (!known) console.error('web chat: request failed', error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(known ? error.status : 500, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error: known ? error.message : 'The server failed; see its log' }));
}

/** Writes a fetch `Response` to a node response, streaming its body; stops reading when the client goes away. */
export async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => {
    if (!res.writableFinished) void reader.cancel();
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}
