import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpProblem } from './http-util.js';

/** What a request may do after {@link AccessGuard.check}: go on, and whether to set the cookie. */
export interface Access {
  /** The token came in the query: set the cookie (and, for a page, redirect to the URL without it). */
  readonly fromQuery: boolean;
}

/**
 * The inspector's access rules: the `Host` header must be an allowed one (DNS rebinding), and
 * every request must carry the token — in the `token` query parameter once, then in an
 * `HttpOnly`, `SameSite=Strict` cookie whose name includes the port. A `POST` must also come
 * from the page's own origin when the browser says where it comes from.
 */
export class AccessGuard {
  readonly #token: Buffer;
  readonly #allowedHosts: ReadonlySet<string>;
  /** The cookie's name: `signalyard_inspector_<port>`. */
  readonly cookieName: string;

  constructor(opts: { token: string; port: number; allowedHosts: readonly string[] }) {
    this.#token = Buffer.from(opts.token);
    this.#allowedHosts = new Set(opts.allowedHosts.map((h) => h.toLowerCase()));
    this.cookieName = `signalyard_inspector_${opts.port}`;
  }

  /**
   * @throws HttpProblem 403 `host_not_allowed` / `origin_not_allowed`, 401 `unauthorized`.
   */
  check(req: IncomingMessage, url: URL): Access {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!this.#allowedHosts.has(host)) {
      throw new HttpProblem(
        403,
        'host_not_allowed',
        `Host ${JSON.stringify(host)} is not allowed: open the inspector at one of ${[...this.#allowedHosts].join(', ')} (or pass allowedHosts)`,
      );
    }
    const origin = req.headers.origin;
    if (req.method === 'POST' && origin !== undefined && !this.#allowedHosts.has(hostOfOrigin(origin))) {
      throw new HttpProblem(
        403,
        'origin_not_allowed',
        `a request from ${JSON.stringify(origin)} may not change sessions`,
      );
    }
    const queryToken = url.searchParams.get('token');
    if (queryToken !== null && this.#matches(queryToken)) return { fromQuery: true };
    if (this.#matches(cookieValue(req.headers.cookie, this.cookieName))) return { fromQuery: false };
    throw new HttpProblem(
      401,
      'unauthorized',
      'this inspector needs its token: open the URL it printed (with ?token=…)',
    );
  }

  /** The `Set-Cookie` value that keeps the token for later requests. */
  cookie(): string {
    return `${this.cookieName}=${this.#token.toString()}; HttpOnly; SameSite=Strict; Path=/`;
  }

  #matches(candidate: string | undefined): boolean {
    if (candidate === undefined) return false;
    const given = Buffer.from(candidate);
    return given.length === this.#token.length && timingSafeEqual(given, this.#token);
  }
}

function hostOfOrigin(origin: string): string {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return '';
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
