// Execute one CLI workflow.json with the pinned @openfn/runtime and adaptors.
//
//   node --experimental-vm-modules run.mjs [--events-fd N] < INPUT.json   (events on fd N, else stdout)
//
// It must run from the folder holding node_modules (bare imports resolve there).
//
// INPUT (stdin, JSON; it is the only place credential values travel: never argv,
// env or a file): {
//   "plan": <CLI workflow.json {"steps": [...], "start"?} or {"workflow": {...}, "options"?}>,
//   "state": <initial state>,                      // default {"data": {}}
//   "credentials": {"<name>": {...}} | null,       // the credential map, as `openfn --creds`:
//                                                  // a step whose `configuration` names a
//                                                  // credential gets that entry, a step naming
//                                                  // one not in the map or none gets nothing
//   "network": "none" | "loopback",                // "none" (default): HTTP answered from
//                                                  // `responses`, every socket refused;
//                                                  // "loopback": real HTTP to this machine only
//   "responses": [{method, url, status, body, headers}],
//   "limits": {"step_bytes": 65536, "timeout_ms": 30000, "state_mb": 10},
//   "record_bodies": false,                        // request bodies in `request` events (evals)
//   "inject_failures": {"<step id>": "<message>"}  // evals only: append a throwing operation
// }
// EVENTS, one JSON object a line, in this order:
//   {"ev": "plan", "runtime": {package: version}, "adaptors": {stepId: [{name, requested, ran}]},
//    "compile": {stepId: {imports, operations, unknown}}, "credentials": {stepId: name},
//    "unmapped": [name]}   // credentials steps name that the map does not give (the CLI warns)
//   {"ev": "unsupported", "steps": [{"id", "kind": "not_installed"|"syntax"|"subset", "reason",
//    "adaptors"? (the specifiers not installed), "line"?, "column"?}]}
//   {"ev": "step-start", "id", "at_ms"}
//   {"ev": "request", "step", "method", "url", "status", "matched", "body"?}
//   {"ev": "violation", "step", "what", "host", "port", "message"}
//   {"ev": "step-end", "id", "status": "succeeded"|"failed", "duration_ms", "input", "output",
//    "error", "logs", "truncated", "next": [stepId]}
//   {"ev": "done", "status": "ran"|"unsupported"|"invalid"|"crashed"|"timed_out", "final", "error",
//    "final_truncated"}
// Values are cut to limits.step_bytes (their JSON text; a cut value becomes the first
// bytes of that text, a string) and `truncated` says so.
import { setNetworkMode } from './guard.mjs';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import util from 'node:util';
import { CompileError, compileJob } from './compile.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const MANIFEST = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
const INSTALLED = Object.keys(MANIFEST.dependencies).filter((name) => name.startsWith('@openfn/language-'));

// `--events-fd N`: the pipe the caller reads events from (stdout when left out).
const fdFlag = process.argv.indexOf('--events-fd');
const eventFd = fdFlag > 0 ? Number(process.argv[fdFlag + 1]) : 1;

function emit(event) {
  fs.writeSync(eventFd, JSON.stringify(event) + '\n');
}

function packageJson(name) {
  return JSON.parse(fs.readFileSync(path.join(HERE, 'node_modules', name, 'package.json'), 'utf8'));
}

const installed = Object.fromEntries(INSTALLED.map((name) => [name, packageJson(name).version]));

function splitSpecifier(specifier) {
  const at = specifier.lastIndexOf('@');
  if (at > 0) return { name: specifier.slice(0, at), version: specifier.slice(at + 1) };
  return { name: specifier, version: undefined };
}

// An adaptor runs here when its package is installed and the requested version is
// `latest`, absent, or has the installed major version (`adaptors` in the plan event
// says which version actually ran).
function resolveAdaptor(specifier) {
  const { name, version } = splitSpecifier(specifier);
  const have = installed[name];
  if (!have) return { specifier, missing: `${specifier} is not installed here (installed: ${describeInstalled()})` };
  if (version && version !== 'latest' && version.split('.')[0] !== have.split('.')[0]) {
    return { specifier, missing: `${specifier} is not installed here (only ${name}@${have})` };
  }
  return { name, requested: version ?? null, ran: have };
}

function describeInstalled() {
  return Object.entries(installed).map(([name, version]) => `${name}@${version}`).join(', ');
}

function stepAdaptors(step) {
  if (Array.isArray(step.adaptors)) return step.adaptors;
  if (typeof step.adaptor === 'string') return [step.adaptor];
  return [];
}

// What @openfn/cli's execute does with its credential map before the runtime sees the
// plan: a step's `configuration` that is a name (a string not ending in `.json`)
// becomes the map's entry for that name, or is removed when the map has none (the CLI
// warns and runs the step without configuration); an object carrying the name under
// `$CREDENTIALS$` gets the entry merged in; any other object is the step's own. No step
// gets configuration it does not name. A `.json` path would be read from disk by the
// CLI: here no file is given, so that step is unsupported (returned as its reason).
const CREDENTIALS_KEY = '$CREDENTIALS$';

function applyCredentialMap(step, map, unmapped) {
  const given = step.configuration;
  if (typeof given === 'string') {
    if (given.endsWith('.json')) return `its configuration is a file path (${given}); pass the values as a credential instead`;
    if (Object.hasOwn(map, given)) step.configuration = structuredClone(map[given]);
    else {
      unmapped.add(given);
      delete step.configuration;
    }
    return null;
  }
  if (given && typeof given === 'object' && Object.hasOwn(given, CREDENTIALS_KEY)) {
    const { [CREDENTIALS_KEY]: name, ...rest } = given;
    if (Object.hasOwn(map, name)) Object.assign(rest, structuredClone(map[name]));
    else unmapped.add(name);
    step.configuration = rest;
  }
  return null;
}

function credentialName(step) {
  const given = step.configuration;
  if (typeof given === 'string') return given;
  if (given && typeof given === 'object' && typeof given[CREDENTIALS_KEY] === 'string') return given[CREDENTIALS_KEY];
  return null;
}

function message(error) {
  if (!error) return null;
  if (typeof error === 'string') return explainDenied(error);
  const text = [error.name, error.message].filter(Boolean).join(': ');
  if (text) return explainDenied(text);
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

// node runs under its permission model (process.py): reading a file outside the runtime,
// writing any, starting a process or a worker thread throws ERR_ACCESS_DENIED, whose
// message the runtime keeps (a step's JobError) without its code. Say what it means.
const DENIED = 'Access to this API has been restricted';
function explainDenied(text) {
  if (!text.includes(DENIED) || text.includes('ERR_ACCESS_DENIED')) return text;
  return `${text} (ERR_ACCESS_DENIED: a test run may read only OpenFn's runtime and adaptors, and may write no file, start no process and no worker thread)`;
}

// --- limits ---------------------------------------------------------------------
let STEP_BYTES = 65536;

function jsonText(value) {
  const seen = new WeakSet();
  return JSON.stringify(value, (key, item) => {
    if (typeof item === 'bigint') return item.toString();
    if (item && typeof item === 'object') {
      if (seen.has(item)) return '[Circular]';
      seen.add(item);
    }
    return item;
  });
}

// `value` as JSON data within STEP_BYTES of JSON text: [value, truncated].
function cut(value, limit = STEP_BYTES) {
  if (value === undefined) return [null, false];
  let text;
  try {
    text = jsonText(value);
  } catch (error) {
    return [`(not JSON: ${message(error)})`, false];
  }
  if (text === undefined) return [null, false];
  if (Buffer.byteLength(text) <= limit) return [JSON.parse(text), false];
  return [Buffer.from(text).subarray(0, limit).toString('utf8').replace(/\uFFFD$/, '') + '…', true];
}

// --- per-step capture ---------------------------------------------------------------
let current = null; // {id, logs, logBytes, truncated, input}

function addLog(args) {
  if (!current) return;
  const line = util.format(...args);
  if (current.logBytes >= STEP_BYTES) {
    current.truncated = true;
    return;
  }
  const room = STEP_BYTES - current.logBytes;
  const kept = Buffer.byteLength(line) > room ? Buffer.from(line).subarray(0, room).toString('utf8') + '…' : line;
  if (kept !== line) current.truncated = true;
  current.logs.push(kept);
  current.logBytes += Buffer.byteLength(kept);
}

// The job's `console` inside the runtime's sandbox, and the adaptors' own console
// (they log from this realm, e.g. "GET https://... - 200 in 3ms"): both go to the
// running step's logs, never to this process's stdout.
const LEVELS = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'success', 'always', 'print'];
const jobLogger = Object.fromEntries(LEVELS.map((level) => [level, (...args) => addLog(args)]));
for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) console[level] = (...args) => addLog(args);

const planwright = Object.freeze({
  input(state) {
    if (!current || current.input !== undefined) return;
    const { configuration, ...rest } = state ?? {};
    // Cut (a JSON copy) now: the step's code may change the very objects it was given,
    // and the input reported is the state it started with, not what it made of it.
    current.input = cut(rest);
  },
});

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function main() {
  const input = JSON.parse(await readStdin());
  const network = input.network ?? 'none';
  setNetworkMode(network, (record) => emit({ ev: 'violation', step: current?.id ?? null, ...record }));
  STEP_BYTES = input.limits?.step_bytes ?? STEP_BYTES;
  const timeoutMs = input.limits?.timeout_ms ?? 30000;
  const runtimeVersion = packageJson('@openfn/runtime').version;

  // Like @openfn/cli's loader: a file with top-level `steps` is a workflow and gets
  // wrapped as a plan; a file with `workflow.steps` is a plan already.
  let plan = input.plan;
  if (plan && typeof plan === 'object' && Array.isArray(plan.steps)) plan = { workflow: plan };
  if (!plan || typeof plan !== 'object' || !plan.workflow || !Array.isArray(plan.workflow.steps)) {
    emit({ ev: 'plan', runtime: { '@openfn/runtime': runtimeVersion }, adaptors: {}, compile: {} });
    emit({ ev: 'done', status: 'invalid', error: 'not a CLI workflow: expected {"steps": [...]} or {"workflow": {"steps": [...]}}' });
    return;
  }
  const steps = plan.workflow.steps.map((step) => ({ ...step }));
  const adaptorsOf = {};
  const unsupported = [];
  const credentialMap = input.credentials ?? {};
  const credentialOf = {};
  const unmapped = new Set();
  for (const step of steps) {
    if (typeof step.expression !== 'string') continue; // a trigger
    const name = credentialName(step);
    if (name !== null) credentialOf[step.id] = name;
    const refused = applyCredentialMap(step, credentialMap, unmapped);
    if (refused) {
      unsupported.push({ id: step.id, kind: 'subset', reason: refused });
      continue;
    }
    const resolved = stepAdaptors(step).map(resolveAdaptor);
    const missing = resolved.filter((a) => a.missing);
    if (missing.length) {
      unsupported.push({
        id: step.id,
        kind: 'not_installed',
        reason: missing.map((a) => a.missing).join('; '),
        adaptors: missing.map((a) => a.specifier),
      });
    } else {
      adaptorsOf[step.id] = resolved;
    }
  }
  // Only the adaptors this plan uses are loaded (node starts faster).
  const exportsOf = {};
  for (const name of new Set(Object.values(adaptorsOf).flat().map((a) => a.name))) {
    exportsOf[name] = Object.keys(await import(name)).filter((key) => key !== 'default');
  }
  const compiled = {};
  for (const step of steps) {
    const resolved = adaptorsOf[step.id];
    if (typeof step.expression !== 'string' || !resolved) continue;
    try {
      const result = compileJob(
        step.expression,
        resolved.map((a) => ({ specifier: a.name, exports: exportsOf[a.name] })),
        {
          injectFailure: input.inject_failures?.[step.id],
          prelude: ['(state) => { __planwright.input(state); return state; }'],
        },
      );
      compiled[step.id] = { imports: result.imports, operations: result.operations, unknown: result.unknown };
      step.expression = result.code;
      step.linker = Object.fromEntries(resolved.map((a) => [a.name, { path: path.join(HERE, 'node_modules', a.name) }]));
      // A `.then()`/`.catch()` chain imports the runtime's `defer`, as the real compiler's output does.
      if (result.runtimeImports) step.linker['@openfn/runtime'] = { path: path.join(HERE, 'node_modules', '@openfn/runtime') };
      delete step.adaptors;
      delete step.adaptor;
    } catch (error) {
      if (!(error instanceof CompileError)) throw error;
      const kind = error.kind ?? 'subset';
      unsupported.push({ id: step.id, kind, reason: error.message, line: error.line ?? null, column: error.column ?? null });
    }
  }
  const runtime = { '@openfn/runtime': runtimeVersion };
  for (const name of Object.keys(exportsOf)) runtime[name] = installed[name];
  emit({ ev: 'plan', runtime, adaptors: adaptorsOf, compile: compiled, credentials: credentialOf, unmapped: [...unmapped] });
  if (unsupported.length) {
    emit({ ev: 'unsupported', steps: unsupported });
    emit({ ev: 'done', status: 'unsupported', error: null });
    return;
  }

  if (network === 'none') {
    const { interceptRequests } = await import('./intercept.mjs');
    interceptRequests(input.responses ?? [], (record) => {
      const event = { ev: 'request', step: current?.id ?? null, ...record };
      if (input.record_bodies) [event.body] = cut(record.body);
      else delete event.body;
      emit(event);
    });
  }
  const { default: run } = await import('@openfn/runtime');
  const { createMockLogger } = await import('@openfn/logger');

  // No workflow-wide credentials (the CLI sets none): each step has only what it named.
  const { credentials: _ignored, ...workflow } = plan.workflow;
  const xplan = { ...plan, workflow: { ...workflow, steps } };
  const started = Date.now();
  const finish = (payload, status) => {
    if (!current || current.id !== payload.jobId) return;
    const [inputValue, inputCut] = current.input ?? [null, false];
    const [output, outputCut] = cut(payload.state);
    emit({
      ev: 'step-end',
      id: payload.jobId,
      status,
      duration_ms: Date.now() - current.startedAt,
      input: inputValue,
      output,
      error: status === 'failed' ? message(payload.error) : null,
      logs: current.logs,
      truncated: current.truncated || inputCut || outputCut,
      next: payload.next ?? [],
    });
    current = null;
  };
  const notify = (event, payload) => {
    if (event === 'job-start') {
      current = { id: payload.jobId, logs: [], logBytes: 0, truncated: false, input: undefined, startedAt: Date.now() };
      emit({ ev: 'step-start', id: payload.jobId, at_ms: Date.now() - started });
    } else if (event === 'job-complete') {
      finish(payload, 'succeeded');
    } else if (event === 'job-error') {
      finish(payload, 'failed');
    }
  };
  try {
    const final = await run(xplan, input.state ?? { data: {} }, {
      logger: createMockLogger(),
      jobLogger,
      globals: { __planwright: planwright },
      // Every name was resolved above, as the CLI does; the runtime never asks.
      callbacks: { notify },
      defaultRunTimeoutMs: timeoutMs,
      stateLimitMb: input.limits?.state_mb ?? 10,
    });
    const [value, truncated] = cut(final ?? null);
    emit({ ev: 'done', status: 'ran', final: value, final_truncated: truncated, error: null });
  } catch (error) {
    const errors = Array.isArray(error) ? error : [error];
    const timedOut = errors.some((e) => e?.name === 'TimeoutError');
    emit({ ev: 'done', status: timedOut ? 'timed_out' : 'crashed', final: null, error: errors.map(message).join('; ') });
  }
}

// Exit as soon as the events are written: keep-alive sockets and the runtime's
// step timers would otherwise hold the process open for many seconds.
main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`run.mjs failed: ${error?.stack ?? error}\n`);
    process.exit(2);
  },
);
