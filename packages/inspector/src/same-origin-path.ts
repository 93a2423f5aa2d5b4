/** The base the check below resolves against: any origin of our own. */
const OWN = 'http://inspector.invalid';

/**
 * `url`'s path and query as a redirect target that stays on this server. The URL parser makes
 * `/.//evil.com/` the path `//evil.com/`, which a browser reads in a `Location` as another host;
 * so leading slashes (and backslashes) collapse into one, and a target that would still resolve
 * elsewhere becomes `/`.
 */
export function sameOriginPath(url: URL): string {
  const target = `/${url.pathname.replace(/^[/\\]+/, '')}${url.search}`;
  return new URL(target, OWN).origin === OWN ? target : '/';
}
