// Loopback-only network guard for run.mjs, installed before any adaptor loads.
//
// Adaptors (undici in @openfn/language-http) open sockets from this process,
// out of reach of the Python test suite's socket guard. Every TCP connect and
// DNS lookup to anything other than this machine throws, so a job that tries
// to reach a real host fails loudly (the error is recorded as
// `network_violations` in run.mjs's output and the Python side fails the run).
import dns from 'node:dns';
import net from 'node:net';

export const violations = [];

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.', 'ip6-localhost']);

export function isLoopback(host) {
  if (host === undefined || host === null || host === '') return true; // net defaults to localhost
  const text = String(host).replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(text)) return true;
  if (net.isIPv4(text)) return text.startsWith('127.');
  if (net.isIPv6(text)) return text === '::1' || text.startsWith('::ffff:127.');
  return false;
}

function refuse(host, port) {
  const message = `network guard: refused connection to ${host}:${port} (loopback only)`;
  violations.push(message);
  return new Error(message);
}

const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  let options = args[0];
  if (Array.isArray(options)) options = options[0]; // internal normalized form
  let host;
  let port;
  if (options !== null && typeof options === 'object') {
    if (options.path) return realConnect.apply(this, args); // unix socket: local
    host = options.host;
    port = options.port;
  } else if (typeof options === 'string' && Number.isNaN(Number(options))) {
    return realConnect.apply(this, args); // a unix socket path
  } else {
    port = options;
    host = typeof args[1] === 'string' ? args[1] : undefined;
  }
  if (!isLoopback(host)) throw refuse(host, port);
  return realConnect.apply(this, args);
};

const realLookup = dns.lookup;
dns.lookup = function guardedLookup(hostname, ...rest) {
  if (!isLoopback(hostname) && !net.isIP(String(hostname))) {
    const callback = rest[rest.length - 1];
    const error = refuse(hostname, '(dns)');
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
    if (!isLoopback(hostname) && !net.isIP(String(hostname))) throw refuse(hostname, '(dns)');
    return realPromiseLookup.call(this, hostname, ...rest);
  };
}
