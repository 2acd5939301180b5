// Execute one CLI workflow.json with the pinned @openfn/runtime and adaptors.
//
//   node --experimental-vm-modules run.mjs INPUT.json OUTPUT.json
//
// INPUT.json: {
//   "plan": <CLI workflow.json: {"steps": [...], "start"?} or {"workflow": {...}, "options"?}>,
//   "state": <initial state>,              // default {"data": {}}
//   "base_url": "http://127.0.0.1:PORT",   // every step's configuration.baseUrl
//   "inject_failures": {"<step id>": "<message>"}  // append a throwing operation
// }
// OUTPUT.json: {status, compile, compile_errors, not_installed, events, path,
//   errors, final, crash, network_violations, runtime_version, adaptor_versions}
// `status`: "ran" | "not_run" (an adaptor not installed here, or code outside the
// compiler's subset) | "invalid" (bad plan, syntax error, crash).
// It must run from the folder holding node_modules (bare imports resolve there).
import { violations } from './guard.mjs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMockLogger } from '@openfn/logger';
import run from '@openfn/runtime';
import { CompileError, compileJob } from './compile.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
// Every adaptor package.json pins (the ones the npm registry serves here).
const INSTALLED = Object.keys(JSON.parse(require('node:fs').readFileSync(path.join(HERE, 'package.json'), 'utf8')).dependencies)
  .filter((name) => name.startsWith('@openfn/language-'));

function splitSpecifier(specifier) {
  const at = specifier.lastIndexOf('@');
  if (at > 0) return { name: specifier.slice(0, at), version: specifier.slice(at + 1) };
  return { name: specifier, version: undefined };
}

function packageJson(name) {
  return JSON.parse(require('node:fs').readFileSync(path.join(HERE, 'node_modules', name, 'package.json'), 'utf8'));
}

const installed = Object.fromEntries(INSTALLED.map((name) => [name, packageJson(name).version]));

// An adaptor runs here when its package is installed and the requested version
// is `latest`, absent, or has the installed major version (recorded in
// `adaptor_versions` so a report can say which version actually ran).
function resolveAdaptor(specifier) {
  const { name, version } = splitSpecifier(specifier);
  const have = installed[name];
  if (!have) return null;
  if (version && version !== 'latest' && version.split('.')[0] !== have.split('.')[0]) return null;
  return { name, requested: version ?? null, ran: have };
}

function stepAdaptors(step) {
  if (Array.isArray(step.adaptors)) return step.adaptors;
  if (typeof step.adaptor === 'string') return [step.adaptor];
  return [];
}

function message(error) {
  if (!error) return null;
  if (typeof error === 'string') return error;
  return [error.name, error.message].filter(Boolean).join(': ') || JSON.stringify(error);
}

async function main() {
  const [inputPath, outputPath] = process.argv.slice(2);
  const input = JSON.parse(await readFile(inputPath, 'utf8'));
  const out = {
    status: 'invalid',
    runtime_version: packageJson('@openfn/runtime').version,
    adaptor_versions: {},
    compile: {},
    compile_errors: {},
    not_installed: {},
    events: [],
    path: [],
    errors: {},
    final: null,
    crash: null,
    network_violations: violations,
  };
  const write = () => writeFile(outputPath, JSON.stringify(out, null, 2));
  // Like @openfn/cli's loader: a file with top-level `steps` is a workflow and
  // gets wrapped as a plan; a file with `workflow.steps` is a plan already.
  let plan = input.plan;
  if (plan && typeof plan === 'object' && Array.isArray(plan.steps)) plan = { workflow: plan };
  if (!plan || typeof plan !== 'object' || !plan.workflow || !Array.isArray(plan.workflow.steps)) {
    out.crash = 'not a CLI workflow: expected {"steps": [...]} or {"workflow": {"steps": [...]}}';
    return write();
  }
  const exportsOf = {};
  for (const name of INSTALLED) {
    exportsOf[name] = Object.keys(await import(name)).filter((key) => key !== 'default');
  }
  const steps = plan.workflow.steps.map((step) => ({ ...step }));
  let subsetOnly = true;
  for (const step of steps) {
    if (typeof step.expression !== 'string') continue; // a trigger
    const wanted = stepAdaptors(step);
    const resolved = wanted.map(resolveAdaptor);
    const missing = wanted.filter((_, index) => resolved[index] === null);
    if (missing.length) {
      out.not_installed[step.id] = missing;
      continue;
    }
    out.adaptor_versions[step.id] = resolved;
    try {
      const compiled = compileJob(
        step.expression,
        resolved.map((a) => ({ specifier: a.name, exports: exportsOf[a.name] })),
        { injectFailure: input.inject_failures?.[step.id] },
      );
      out.compile[step.id] = { imports: compiled.imports, operations: compiled.operations, unknown: compiled.unknown };
      step.expression = compiled.code;
      step.linker = Object.fromEntries(resolved.map((a) => [a.name, { path: path.join(HERE, 'node_modules', a.name) }]));
      delete step.adaptors;
      delete step.adaptor;
    } catch (error) {
      if (!(error instanceof CompileError)) throw error;
      const kind = error.message.includes('does not parse') ? 'syntax' : 'subset';
      if (kind === 'syntax') subsetOnly = false;
      out.compile_errors[step.id] = { kind, message: error.message, line: error.line ?? null, column: error.column ?? null };
    }
  }
  if (Object.keys(out.compile_errors).length || Object.keys(out.not_installed).length) {
    out.status = subsetOnly ? 'not_run' : 'invalid';
    return write();
  }
  const baseUrl = input.base_url;
  const xplan = {
    ...plan,
    workflow: { ...plan.workflow, steps, credentials: { ...(plan.workflow.credentials ?? {}), ...(baseUrl ? { baseUrl } : {}) } },
  };
  const notify = (event, payload) => {
    if (!['job-start', 'job-complete', 'job-error'].includes(event)) return;
    const entry = { event, step: payload.jobId };
    if (event === 'job-start') out.path.push(payload.jobId);
    if (payload.next) entry.next = payload.next;
    if (event === 'job-error') entry.error = message(payload.error);
    out.events.push(entry);
  };
  const logger = createMockLogger();
  try {
    const final = await run(xplan, input.state ?? { data: {} }, {
      logger,
      jobLogger: createMockLogger(),
      callbacks: { notify, resolveCredential: async () => (baseUrl ? { baseUrl } : {}) },
      defaultRunTimeoutMs: 30000,
    });
    out.final = final ?? null;
    out.status = 'ran';
  } catch (error) {
    const errors = Array.isArray(error) ? error : [error];
    out.crash = errors.map(message).join('; ');
  }
  for (const entry of out.events) if (entry.event === 'job-error') out.errors[entry.step] = entry.error;
  return write();
}

// Exit as soon as the output is written: keep-alive sockets and the runtime's
// step timers would otherwise hold the process open for many seconds.
main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`run.mjs failed: ${error?.stack ?? error}\n`);
    process.exit(2);
  },
);
