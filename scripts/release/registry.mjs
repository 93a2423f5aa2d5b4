// A local npm registry for `pnpm release:rehearse`: Verdaccio (a dev dependency, 6.8.0: the last
// line that runs on Node 20, with its audit plugin's node-fetch pinned to 2.7.0 in package.json's
// pnpm.overrides), on 127.0.0.1 at a free port, its config, storage and users in a folder of
// its own. The names given as `localOnly` are served from what was published to it alone (never
// from the public registry, where another package could hold the name); every other package is
// fetched through it from the registry npm is configured with.
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { run } from './steps.mjs';

const require = createRequire(import.meta.url);

/**
 * One HTTP request to the registry on a connection of its own (Verdaccio closes idle
 * connections, which a pooled client would reuse). Resolves with `{ status, body }` (a Buffer).
 */
export function registryRequest(url, { method = 'GET', json } = {}) {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? undefined : JSON.stringify(json);
    const req = httpRequest(
      url,
      { method, agent: false, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A free TCP port on 127.0.0.1 (the system picks one; it is released for the registry to take). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The registry npm uses here (the rehearsal's uplink for third-party packages). */
function upstreamRegistry(cwd) {
  const configured = run('npm', ['config', 'get', 'registry'], { cwd, quiet: true }).stdout.trim();
  return configured.endsWith('/') ? configured : `${configured}/`;
}

function configYaml({ upstream, localOnly }) {
  const local = localOnly
    .map((name) => `  ${JSON.stringify(name)}:\n    access: $all\n    publish: $authenticated\n`)
    .join('');
  return `# Written by scripts/release/registry.mjs for one rehearsal.
storage: ./storage
auth:
  htpasswd:
    file: ./htpasswd
    max_users: 10
    rounds: 4 # a throwaway user: bcrypt's default 10 rounds cost a second per request
uplinks:
  upstream:
    url: ${upstream}
    timeout: 60s
    maxage: 30m
packages:
${local}  '**':
    access: $all
    publish: $authenticated
    proxy: upstream
web:
  enable: false
max_body_size: 200mb
log: { type: stdout, format: pretty, level: warn }
`;
}

/**
 * Starts the registry in `dir` and creates a user. Resolves with `{ url, token, stop() }`;
 * `stop()` ends the registry process (and only it).
 */
export async function startRegistry({ dir, localOnly, cwd }) {
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const config = join(dir, 'config.yaml');
  writeFileSync(config, configYaml({ upstream: upstreamRegistry(cwd), localOnly }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const bin = join(require.resolve('verdaccio/package.json'), '..', 'bin', 'verdaccio');
  const child = spawn(process.execPath, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (log += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (log += chunk));
  let exited = false;
  child.on('exit', () => (exited = true));
  const stop = () =>
    new Promise((resolve) => {
      if (exited) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });

  try {
    // Up when it answers its ping: a bounded wait (Verdaccio starts in about a second).
    for (let attempt = 0; ; attempt++) {
      if (exited) throw new Error(`the registry exited at start:\n${log}`);
      const up = await registryRequest(`${url}-/ping`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (up) break;
      if (attempt === 300) throw new Error(`the registry did not answer on ${url} within 60 s:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const response = await registryRequest(`${url}-/user/org.couchdb.user:rehearsal`, {
      method: 'PUT',
      json: { name: 'rehearsal', password: 'rehearsal-only-password' },
    });
    const body = JSON.parse(response.body.toString('utf8'));
    if (response.status !== 201 || typeof body.token !== 'string') {
      throw new Error(`creating the registry's user failed: ${response.status} ${JSON.stringify(body)}`);
    }
    return { url, token: body.token, stop, log: () => log };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** An .npmrc that points npm and pnpm at `url`, with `token` for publishing. */
export function npmrc({ url, token }) {
  const host = url.replace(/^http:/, '');
  return `registry=${url}\n${host}:_authToken=${token}\n`;
}
