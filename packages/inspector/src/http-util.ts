import type { IncomingMessage, ServerResponse } from 'node:http';

/** Headers every response carries: nothing cached, nothing framed, no script but the page's own. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** An HTTP failure the API reports as `{ error: { code, message } }`. @internal */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpProblem';
  }
}

/** Writes the security headers and `headers`, then `body`. */
export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers });
  res.end(body);
}

/** A JSON response. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), { 'content-type': 'application/json; charset=utf-8' });
}

/** The problem as a JSON error response. */
export function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  sendJson(res, problem.status, { error: { code: problem.code, message: problem.message } });
}

/** The security headers, for a response that writes its own head (the event stream). */
export function securityHeaders(): Record<string, string> {
  return { ...SECURITY_HEADERS };
}

const MAX_BODY_BYTES = 64 * 1024;

/**
 * The request's JSON body: `application/json`, at most 64 KiB, an object.
 * @throws HttpProblem 415, 413 or 400.
 */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new HttpProblem(
      415,
      'content_type_invalid',
      `expected a JSON body (content-type application/json), got ${JSON.stringify(type ?? '')}`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new HttpProblem(413, 'body_too_large', `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpProblem(400, 'request_invalid', 'the body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpProblem(400, 'request_invalid', 'expected a JSON object body');
  }
  return value as Record<string, unknown>;
}
