// The page's calls to the inspector's JSON API (same origin; the token is in the cookie).

/** GET `path`, or POST `body` as JSON to it; resolves with the JSON answer, rejects with its error. */
export async function api(path, body) {
  const init =
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch(path, { ...init, credentials: 'same-origin' });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error ? `${data.error.code}: ${data.error.message}` : `HTTP ${res.status}`);
  return data;
}
