#!/usr/bin/env node
// External check: load a Lightning project.yaml with OpenFn's own
// @openfn/project package and print what it made of it, as normalized JSON.
//
//   node check.mjs path/to/project.yaml [--spec]
//
// With --spec the result also holds `spec_yaml`: the project written back as a
// Lightning project.yaml by the package itself (`project.serialize('spec')`).
//
// Bare imports resolve from this file's folder, so the Python harness copies
// this script into the folder where package.json / package-lock.json were
// installed (<repo>/.cache/openfn-project) and runs it from there.
//
// How @openfn/project (pinned in package.json) reads a Lightning project.yaml:
// `Project.from('path', file)` reads the file and hands it to the 'project'
// parser, which picks a format by sniffing the content:
//   - schema_version / version / cli.version == 2 at the top level -> v2
//     project file (steps lists, not Lightning's jobs/triggers/edges);
//   - otherwise, if `credentials` is a map or any edge has source_job /
//     source_trigger / target_job -> the Lightning "app spec" (project.yaml)
//     parser, which is the one our documents need;
//   - otherwise -> v1 app *state* (the UUID-keyed `openfn pull` state.json:
//     edges use source_job_id / source_trigger_id / target_job_id). Our
//     documents would lose every edge there, silently.
// The guard below refuses to print anything unless the spec parser is the one
// that will run, so a document that would be mis-sniffed fails loudly.

import { readFile } from 'node:fs/promises';
import Project, { detectVersion, yamlToJson } from '@openfn/project';

// Keys printed in their own slots; everything else on a step goes to `extra`.
const JOB_KEYS = ['name', 'adaptor', 'expression'];
const TRIGGER_KEYS = ['type', 'enabled', 'cron_expression'];
const SKIP_KEYS = new Set(['id', 'next', 'openfn']);

const fail = (message) => {
  process.stderr.write(`check.mjs: ${message}\n`);
  process.exit(2);
};

// Mirrors @openfn/project's (private) isAppSpec sniffing.
const isLightningSpec = (json) => {
  if (!json || typeof json !== 'object' || Array.isArray(json.project_credentials)) {
    return false;
  }
  if (json.credentials && !Array.isArray(json.credentials)) {
    return true;
  }
  return Object.values(json.workflows ?? {}).some((wf) =>
    Object.values(wf?.edges ?? {}).some(
      (e) => e && (e.source_job || e.source_trigger || e.target_job),
    ),
  );
};

// A `next` entry may be `true`, a condition string or { condition, label, disabled }.
const normalizeEdge = (edge) => {
  if (typeof edge === 'boolean') {
    return { condition: edge, disabled: false, label: null };
  }
  if (typeof edge === 'string') {
    return { condition: edge, disabled: false, label: null };
  }
  return {
    condition: edge?.condition ?? null,
    disabled: edge?.disabled === true,
    label: edge?.label ?? null,
  };
};

const normalizeNext = (next) => {
  if (next === undefined || next === null) return {};
  if (typeof next === 'string') return { [next]: normalizeEdge(true) };
  return Object.fromEntries(
    Object.entries(next).map(([target, edge]) => [target, normalizeEdge(edge)]),
  );
};

const normalizeStep = (step) => {
  const isTrigger = step.type !== undefined;
  const own = isTrigger ? TRIGGER_KEYS : JOB_KEYS;
  const out = { id: step.id ?? null, kind: isTrigger ? 'trigger' : 'job' };
  for (const key of own) out[key] = step[key] ?? null;
  const extra = {};
  for (const key of Object.keys(step).sort()) {
    if (!SKIP_KEYS.has(key) && !own.includes(key)) extra[key] = step[key];
  }
  out.extra = extra;
  out.next = normalizeNext(step.next);
  return out;
};

const main = async () => {
  const file = process.argv[2];
  const withSpec = process.argv.includes('--spec');
  if (!file) fail('usage: node check.mjs <project.yaml> [--spec]');

  const raw = yamlToJson(await readFile(file, 'utf8'));
  const version = detectVersion(raw);
  if (version !== 1) {
    fail(`@openfn/project reads this file as a v${version} project file, not a Lightning project.yaml`);
  }
  if (!isLightningSpec(raw)) {
    fail(
      'no edge has source_job/source_trigger/target_job and there is no credentials map: ' +
        '@openfn/project would parse this as v1 app state (UUID edges) and drop every edge',
    );
  }

  const project = await Project.from('path', file);
  const result = {
    project: { id: project.id, name: project.name ?? null },
    workflows: project.workflows.map((wf) => ({
      id: wf.id,
      name: wf.name ?? null,
      start: wf.start ?? null,
      steps: wf.steps.map(normalizeStep),
    })),
  };
  if (withSpec) result.spec_yaml = project.serialize('spec', { format: 'yaml' });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
};

main().catch((e) => fail(e?.stack ?? String(e)));
