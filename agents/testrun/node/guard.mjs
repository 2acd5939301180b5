// Network guard for run.mjs, installed before any adaptor loads.
//
// Adaptors (undici in @openfn/language-common) open sockets from this process,
// out of reach of Python's socket guard. Two modes (`setNetworkMode`):
//   * "none" (a test run; the default): every TCP connect and DNS lookup throws,
//     loopback included, and so do child processes and worker threads (a way
//     around this process's patches). HTTP never needs a socket in this mode:
//     run.mjs answers it from the run's samples (see intercept.mjs).
//   * "loopback" (the older callers' mock HTTP servers): only this machine.
// Every refusal is recorded in `violations` (and run.mjs reports it).
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import workerThreads from 'node:worker_threads';

export const violations = [];
let mode = 'none';
let onViolation = () => {};

export function setNetworkMode(next, listener) {
  if (next !== 'none' && next !== 'loopback') throw new Error(`unknown network mode ${next}`);
  mode = next;
  if (listener) onViolation = listener;
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.', 'ip6-localhost']);

export function isLoopback(host) {
  if (host === undefined || host === null || host === '') return true; // net defaults to localhost
  const text = String(host).replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(text)) return true;
  if (net.isIPv4(text)) return text.startsWith('127.');
  if (net.isIPv6(text)) return text === '::1' || text.startsWith('::ffff:127.');
  return false;
}

function allowed(host) {
  return mode === 'loopback' && isLoopback(host);
}

function refuse(what, host, port) {
  const where = port === undefined ? `${host}` : `${host}:${port}`;
  const rule = mode === 'none' ? 'a test run makes no connections' : 'loopback only';
  const message = `network guard: refused ${what} ${where} (${rule})`;
  const record = { what, host: host === undefined ? null : String(host), port: port ?? null, message };
  violations.push(record);
  onViolation(record);
  const error = new Error(message);
  error.code = 'ECONNREFUSED';
  return error;
}

const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  let options = args[0];
  if (Array.isArray(options)) options = options[0]; // internal normalized form
  let host;
  let port;
  if (options !== null && typeof options === 'object') {
    if (options.path) {
      if (mode === 'loopback') return realConnect.apply(this, args); // unix socket: local
      throw refuse('connection to', options.path);
    }
    host = options.host;
    port = options.port;
  } else if (typeof options === 'string' && Number.isNaN(Number(options))) {
    if (mode === 'loopback') return realConnect.apply(this, args); // a unix socket path
    throw refuse('connection to', options);
  } else {
    port = options;
    host = typeof args[1] === 'string' ? args[1] : undefined;
  }
  if (!allowed(host)) throw refuse('connection to', host ?? 'localhost', port);
  return realConnect.apply(this, args);
};

const realLookup = dns.lookup;
dns.lookup = function guardedLookup(hostname, ...rest) {
  if (!allowed(hostname)) {
    const callback = rest[rest.length - 1];
    const error = refuse('DNS lookup of', hostname);
    if (typeof callback === 'function') {
      process.nextTick(() => callback(error));
      return undefined;
    }
    throw error;
  }
  return realLookup.call(this, hostname, ...rest);
};
if (dns.promises) {
  const realPromiseLookup = dns.promises.lookup;
  dns.promises.lookup = async function guardedPromiseLookup(hostname, ...rest) {
    if (!allowed(hostname)) throw refuse('DNS lookup of', hostname);
    return realPromiseLookup.call(this, hostname, ...rest);
  };
}

// UDP (DNS over UDP, anything else): never, in either mode.
for (const name of ['send', 'connect']) {
  const real = dgram.Socket.prototype[name];
  dgram.Socket.prototype[name] = function guardedDgram(...args) {
    if (mode === 'loopback') return real.apply(this, args);
    throw refuse('UDP', 'socket');
  };
}

// Another process or thread would not carry these patches.
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  const real = childProcess[name];
  childProcess[name] = function guardedChild(...args) {
    if (mode === 'loopback') return real.apply(this, args);
    throw refuse('child process', String(args[0]).slice(0, 80));
  };
}
const RealWorker = workerThreads.Worker;
workerThreads.Worker = class GuardedWorker extends RealWorker {
  constructor(...args) {
    if (mode !== 'loopback') throw refuse('worker thread', String(args[0]).slice(0, 80));
    super(...args);
  }
};

// ESM named imports of builtins (`import { exec } from 'child_process'`) see the patches.
syncBuiltinESMExports();
