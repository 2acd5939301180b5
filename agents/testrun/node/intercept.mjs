// Every outbound HTTP request of a test run is answered here, inside node, from the
// run's samples; none reaches a socket.
//
// How the pinned adaptors send requests (read from their dist code, checked by
// tests/agents/testrun): @openfn/language-http 7.2.10 and -fhir 5.0.15 call
// @openfn/language-common 3.3.4's `util.request`, which builds its own undici
// `Agent` per origin (`new Agent(...).compose(redirect, decompress)`) and calls
// `dispatcher.request(...)`; common's deprecated `http` helpers use undici's
// `request` (the global dispatcher). So setting a global dispatcher alone would miss
// the adaptors: every undici dispatcher class (Agent, Pool, Client, ProxyAgent, ...)
// shares `DispatcherBase.prototype.dispatch`, and that is where requests are caught.
// Node's own `fetch` reads the same global-dispatcher slot undici's
// `setGlobalDispatcher` writes, so it is caught too. Anything else (node:http,
// raw sockets) meets guard.mjs, which refuses every connection in a test run.
//
// A request matching a sample (method, and URL exactly or by a prefix ending in
// `*`) is answered by an undici MockPool with the sample's status, body and
// headers; any other gets ECONNREFUSED from the same MockPool, as a step would
// from a host that refuses the connection. Each is reported through `onRequest`.
import { createRequire } from 'node:module';
import path from 'node:path';
import { Agent, Dispatcher, MockAgent, setGlobalDispatcher } from 'undici';

// DispatcherBase.dispatch turns a new-style handler (onRequestStart, ...: what
// undici's interceptors pass down) into the legacy one MockPool speaks; so must we.
// Its module is internal: reached by path inside the very undici copy imported above.
const require = createRequire(import.meta.url);
const UnwrapHandler = require(path.join(path.dirname(require.resolve('undici')), 'lib', 'handler', 'unwrap-handler.js'));

function originOf(opts) {
  const origin = opts.origin;
  if (!origin) return null;
  return typeof origin === 'string' ? new URL(origin).origin : origin.origin;
}

function queryString(query) {
  if (!query || typeof query !== 'object') return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const text = params.toString();
  return text ? text : '';
}

export function requestUrl(opts) {
  const origin = originOf(opts);
  const url = new URL(opts.path ?? '/', origin ?? 'http://unknown');
  const extra = queryString(opts.query);
  if (extra) url.search = url.search ? `${url.search}&${extra}` : `?${extra}`;
  return url.href;
}

function normalise(url) {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

export function matchSample(samples, method, url) {
  for (const sample of samples) {
    if (String(sample.method || 'GET').toUpperCase() !== method) continue;
    const wanted = String(sample.url);
    if (wanted.endsWith('*') ? url.startsWith(wanted.slice(0, -1)) : normalise(wanted) === url) {
      return sample;
    }
  }
  return null;
}

function bodyText(body) {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body) || body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return undefined; // a stream or form: not read (it is the step's own data)
}

function replyOf(sample) {
  const headers = { ...(sample.headers ?? {}) };
  const hasType = Object.keys(headers).some((key) => key.toLowerCase() === 'content-type');
  let payload = '';
  if (sample.body !== undefined && sample.body !== null) {
    payload = typeof sample.body === 'string' ? sample.body : JSON.stringify(sample.body);
    if (!hasType) headers['content-type'] = typeof sample.body === 'string' ? 'text/plain' : 'application/json';
  }
  return { status: sample.status ?? 200, payload, headers };
}

function refusal(url, method, origin) {
  const where = new URL(origin);
  const port = where.port || (where.protocol === 'https:' ? '443' : '80');
  const error = new Error(
    `connect ECONNREFUSED ${where.hostname}:${port} (test run: no sample response matches ${method} ${url})`,
  );
  error.code = 'ECONNREFUSED';
  error.errno = -111;
  error.syscall = 'connect';
  error.address = where.hostname;
  error.port = Number(port);
  return error;
}

/**
 * Answer every undici request of this process from `samples`.
 * @param {{method?: string, url: string, status?: number, body?: any, headers?: object}[]} samples
 * @param {(record: {method: string, url: string, status: number|null, matched: boolean, body?: string}) => void} onRequest
 */
export function interceptRequests(samples, onRequest) {
  const mock = new MockAgent({ connections: 1 });
  mock.disableNetConnect();
  const base = Object.getPrototypeOf(Agent.prototype);
  if (typeof base.dispatch !== 'function' || base === Dispatcher.prototype) {
    throw new Error('undici changed: DispatcherBase.prototype.dispatch not found');
  }

  function answer(opts, handler) {
    const method = String(opts.method || 'GET').toUpperCase();
    const origin = originOf(opts) ?? 'http://unknown';
    const url = requestUrl(opts);
    const sample = matchSample(samples, method, url);
    onRequest({ method, url, status: sample ? (sample.status ?? 200) : null, matched: Boolean(sample), body: bodyText(opts.body) });
    // MockPool.dispatch is its own (not DispatcherBase's), so this never loops.
    const pool = mock.get(origin);
    const scope = pool.intercept({ path: () => true, method: () => true });
    if (sample) {
      const { status, payload, headers } = replyOf(sample);
      scope.reply(status, payload, { headers });
    } else {
      scope.replyWithError(refusal(url, method, origin));
    }
    return pool.dispatch(opts, UnwrapHandler.unwrap(handler));
  }

  base.dispatch = function interceptedDispatch(opts, handler) {
    return answer(opts, handler);
  };

  class SampleDispatcher extends Dispatcher {
    dispatch(opts, handler) {
      return answer(opts, handler);
    }

    async close() {}

    async destroy() {}
  }
  setGlobalDispatcher(new SampleDispatcher());
}
