// A stand-in for @openfn/compiler (not served by the npm registry here): turns a job
// body into the ES module @openfn/runtime executes, with the same transforms, in the
// same order, as the real compiler (packages/compiler in OpenFn/kit):
//
//   1. lazy state: each `$` that roots a member chain (`$.data.x`, `$['a']`) becomes
//      `state`, and the argument of the nearest enclosing call that holds it becomes
//      `(state) => <argument>`, unless it already is an arrow whose one parameter is
//      `state`. Inside callbacks too (`fn(state => get($.data.url))`). What the real
//      compiler refuses is refused the same way (kind "syntax", its words): a `$`
//      whose walk up to a call meets a statement ("Must be inside an operation", e.g.
//      `const x = $.data` or `fn(s => { return $.a })`), an enclosing arrow whose
//      parameter is not called `state`, or an arrow of another arity. A `$` declared
//      in an enclosing function is left alone; a bare `$` (no member) is left as is
//      (the runtime then fails with a ReferenceError, as after the real compiler).
//   2. promises: an operation call chained with `.then(...)`/`.catch(...)` outside any
//      function or block becomes `_defer(op(...), p => p.then(...), catchFn?)` with
//      `import { defer as _defer } from '@openfn/runtime'` (`op().catch(c)` is
//      `_defer(op(), undefined, c)`).
//   3. top-level operations: every top-level expression statement that is a call goes,
//      in order, into `export default [...]`; every other statement (`const`, `let`,
//      `function`, `if`, ...) stays in the module and runs when it loads.
//   4. imports: every identifier the body references (not declared in an enclosing
//      scope, not a property name, not inside the object literal a top-level
//      variable is initialised with, as the real compiler skips those) that an adaptor
//      of the step exports is imported by name from the first adaptor that exports
//      it, and `export * from '<first adaptor>'` is added (the runtime then uses that
//      adaptor's `execute`).
// Outside what it does (kind "subset", never a silent guess): `import`/`export`
// statements in the body (the runner links the step's adaptors itself), a `.then()`
// chain that starts from no call, a `$` in the called function of a call other than
// `$.name(...)`. A top-level call whose root name no adaptor exports and no
// declaration provides is reported in `unknown` (the runtime fails that step with a
// ReferenceError, as it would after the real compiler).
import * as acorn from 'acorn';

const FUNCTION_TYPES = new Set(['FunctionExpression', 'ArrowFunctionExpression', 'FunctionDeclaration']);
const PROMISE_METHODS = new Set(['then', 'catch']);

export class CompileError extends Error {
  constructor(message, loc, kind = 'subset') {
    super(loc ? `line ${loc.line}, column ${loc.column + 1}: ${message}` : message);
    this.line = loc?.line;
    this.column = loc ? loc.column + 1 : undefined;
    this.kind = kind;
  }
}

function children(node) {
  const out = [];
  for (const key of Object.keys(node)) {
    if (key === 'loc' || key === 'start' || key === 'end' || key === 'type') continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item.type === 'string') out.push([key, item]);
    } else if (value && typeof value.type === 'string') {
      out.push([key, value]);
    }
  }
  return out;
}

// Every node with its ancestors (nearest last) and the key it hangs from in its parent.
function walk(root, visit) {
  const ancestors = [];
  const go = (node, key) => {
    if (visit(node, ancestors, key) === false) return;
    ancestors.push(node);
    for (const [childKey, child] of children(node)) go(child, childKey);
    ancestors.pop();
  };
  go(root, null);
}

function bindingNames(pattern, into) {
  if (!pattern) return;
  switch (pattern.type) {
    case 'Identifier':
      into.add(pattern.name);
      break;
    case 'ObjectPattern':
      for (const prop of pattern.properties) bindingNames(prop.type === 'RestElement' ? prop.argument : prop.value, into);
      break;
    case 'ArrayPattern':
      for (const element of pattern.elements) bindingNames(element, into);
      break;
    case 'RestElement':
      bindingNames(pattern.argument, into);
      break;
    case 'AssignmentPattern':
      bindingNames(pattern.left, into);
      break;
    default:
      break;
  }
}

// What a scope (the program, a function, a catch clause) declares: its parameters and
// every declaration in its body outside nested functions (as ast-types' scopes count).
const scopeCache = new WeakMap();
function scopeDeclares(scope) {
  if (scopeCache.has(scope)) return scopeCache.get(scope);
  const names = new Set();
  if (FUNCTION_TYPES.has(scope.type)) {
    if (scope.type === 'FunctionExpression' && scope.id) names.add(scope.id.name);
    for (const param of scope.params) bindingNames(param, names);
  }
  if (scope.type === 'CatchClause') bindingNames(scope.param, names);
  const body = scope.type === 'Program' ? scope : scope.body;
  const visit = (node) => {
    if (node.type === 'FunctionDeclaration') {
      if (node.id) names.add(node.id.name);
      return;
    }
    if (FUNCTION_TYPES.has(node.type) || node.type === 'CatchClause') return;
    if (node.type === 'VariableDeclarator') bindingNames(node.id, names);
    if (node.type === 'ClassDeclaration' && node.id) names.add(node.id.name);
    if (node.type === 'ImportSpecifier' || node.type === 'ImportDefaultSpecifier') names.add(node.local.name);
    for (const [, child] of children(node)) visit(child);
  };
  if (body) visit(body);
  scopeCache.set(scope, names);
  return names;
}

function isScope(node) {
  return node.type === 'Program' || FUNCTION_TYPES.has(node.type) || node.type === 'CatchClause';
}

function declaredAbove(name, ancestors, { includeProgram }) {
  return ancestors.some((node) => isScope(node) && (includeProgram || node.type !== 'Program') && scopeDeclares(node).has(name));
}

const isStatement = (node) => /Statement$|Declaration$/.test(node.type);

function rootName(callee) {
  let node = callee;
  while (node.type === 'MemberExpression') node = node.object;
  return node.type === 'Identifier' ? node.name : null;
}

// --- text edits over the source (replacements and insertions, never overlapping) -----

const RANK = { close: 0, open: 1, null: 2 };

class Edits {
  constructor(source) {
    this.source = source;
    this.list = []; // {start, end, text, side: 'open'|'close'|null}
  }

  // Replaces [start, end); the edits inside it are dropped (the caller has read them).
  replace(start, end, text) {
    this.list = this.list.filter((e) => !(e.start >= start && e.end <= end && !(e.start === e.end && (e.start === start || e.start === end))));
    this.list.push({ start, end, text, side: null });
  }

  insert(at, text, side) {
    this.list.push({ start: at, end: at, text, side });
  }

  // The source from `from` to `to` with the edits inside it applied; an insertion at
  // the range's start belongs to it when it opens something, at its end when it closes.
  text(from, to) {
    const inside = this.list
      .filter((e) => {
        if (e.start !== e.end) return e.start >= from && e.end <= to;
        if (e.start === from) return e.side === 'open';
        if (e.start === to) return e.side === 'close';
        return e.start > from && e.start < to;
      })
      // At one position: what closes there, then what opens there, then a replacement.
      .sort((a, b) => a.start - b.start || RANK[a.side] - RANK[b.side]);
    let out = '';
    let cursor = from;
    for (const edit of inside) {
      out += this.source.slice(cursor, edit.start) + edit.text;
      cursor = edit.end;
    }
    return out + this.source.slice(cursor, to);
  }

  of(node) {
    return this.text(node.start, node.end);
  }
}

// --- 1. lazy state -----------------------------------------------------------------

function lazyState(program, edits) {
  const wrapped = new Set();
  walk(program, (node, ancestors, key) => {
    if (node.type !== 'Identifier' || node.name !== '$') return;
    const parent = ancestors.at(-1);
    if (parent?.type !== 'MemberExpression' || key !== 'object') return; // bare `$`, or a property named $
    if (declaredAbove('$', ancestors, { includeProgram: false })) return;
    edits.replace(node.start, node.end, 'state');
    // The chain's top: the member expression the real compiler visits first.
    let index = ancestors.length - 1;
    while (index > 0 && ancestors[index - 1].type === 'MemberExpression' && ancestors[index - 1].object === ancestors[index]) index -= 1;
    let last = ancestors[index];
    let at = index - 1;
    while (at >= 0 && ancestors[at].type !== 'CallExpression') {
      if (isStatement(ancestors[at])) {
        throw new CompileError(
          'Lazy State Error: Must be inside an operation (`$` can only be used inside an operation such as fn(); OpenFn\'s compiler refuses this too)',
          node.loc.start,
          'syntax',
        );
      }
      last = ancestors[at];
      at -= 1;
    }
    if (at < 0) return;
    const call = ancestors[at];
    let arg = last;
    if (call.callee === last) {
      const oneLevel = last.type === 'MemberExpression' && last.object === node;
      if (!oneLevel) throw new CompileError('`$` in the called function of a call is outside the supported subset', node.loc.start);
      arg = call; // `$.name(...)`: the real compiler wraps the call itself
    }
    if (wrapped.has(arg)) return;
    if (arg.type === 'ArrowFunctionExpression') {
      if (arg.params.length !== 1) {
        throw new CompileError('Lazy State Error: parent has wrong arity (OpenFn\'s compiler refuses this too)', arg.loc.start, 'syntax');
      }
      const name = arg.params[0].type === 'Identifier' ? arg.params[0].name : undefined;
      if (name === 'state') return;
      throw new CompileError(
        `Lazy State Error: parameter "${name}" should be called "state" (OpenFn's compiler refuses this too)`,
        arg.loc.start,
        'syntax',
      );
    }
    wrapped.add(arg);
    edits.insert(arg.start, '(state) => (', 'open');
    edits.insert(arg.end, ')', 'close');
  });
}

// --- 2. promises -------------------------------------------------------------------

const isPromiseCall = (node) =>
  node?.type === 'CallExpression' &&
  node.callee.type === 'MemberExpression' &&
  !node.callee.computed &&
  PROMISE_METHODS.has(node.callee.property.name);

// `op(...).then(a).catch(b)` (outside any function or block) -> `_defer(op(...), p => p.then(a).catch(b))`;
// returns the operation calls it found.
function promises(program, edits) {
  const ops = [];
  walk(program, (node, ancestors) => {
    if (FUNCTION_TYPES.has(node.type) || node.type === 'BlockStatement') return false;
    if (!isPromiseCall(node)) return undefined;
    let op = null;
    let next = node;
    while (next?.type === 'CallExpression') {
      if (next.callee.type === 'Identifier' || (next.callee.type === 'MemberExpression' && !isPromiseCall(next))) {
        op = next;
        break;
      }
      next = next.callee.object;
    }
    if (!op) {
      throw new CompileError('a `.then()`/`.catch()` chain that does not start from an operation call is outside the supported subset', node.loc.start);
    }
    // The call `.catch(fn)` right after the operation, if any, and the call after that.
    const chain = [];
    for (let c = node; c !== op; c = c.callee.object) chain.unshift(c);
    const [first, second] = chain;
    ops.push(op);
    edits.insert(node.start, '_defer(', 'open');
    if (first.callee.property.name === 'catch') {
      const catchFn = first.arguments[0];
      const rest = second ? `p => p${edits.text(first.end, node.end)}` : 'undefined';
      const catchText = catchFn ? edits.of(catchFn) : 'undefined';
      edits.replace(op.end, node.end, `, ${rest}, ${catchText}`);
    } else {
      edits.insert(op.end, ', p => p', 'close');
    }
    edits.insert(node.end, ')', 'close');
    return false;
  });
  return ops;
}

// --- 4. imports --------------------------------------------------------------------

// Identifiers the real compiler may import: in reference position, not declared in an
// enclosing scope, not inside the object literal a top-level variable starts with.
function danglingNames(program) {
  const names = new Set();
  walk(program, (node, ancestors, key) => {
    const parent = ancestors.at(-1);
    if (node.type === 'ObjectExpression' && parent?.type === 'VariableDeclarator' && key === 'init' && ancestors.at(-3)?.type === 'Program') {
      return false;
    }
    if (node.type !== 'Identifier') return undefined;
    if (node.name === 'undefined' || node.name === 'NaN') return undefined;
    const isProperty =
      (parent?.type === 'MemberExpression' && key === 'property' && !parent.computed) ||
      ((parent?.type === 'Property' || parent?.type === 'MethodDefinition' || parent?.type === 'PropertyDefinition') &&
        key === 'key' &&
        !parent.computed) ||
      (parent?.type === 'Property' && parent.shorthand);
    const isLabel = parent?.type === 'LabeledStatement' || parent?.type === 'BreakStatement' || parent?.type === 'ContinueStatement';
    if (isProperty || isLabel) return undefined;
    if (declaredAbove(node.name, [...ancestors, node], { includeProgram: true })) return undefined;
    names.add(node.name);
    return undefined;
  });
  return names;
}

/**
 * Compile one job body.
 * @param {string} source the step's `expression`
 * @param {{specifier: string, exports: string[]}[]} adaptors the step's adaptors, first first
 * @param {{injectFailure?: string, prelude?: string[]}} options `injectFailure`: append an operation
 *   that throws this message (evals only); `prelude`: operations (source) run before the body's
 * @returns {{code: string, imports: Record<string, string[]>, operations: string[], unknown: string[],
 *   runtimeImports: boolean}}
 */
export function compileJob(source, adaptors, options = {}) {
  let program;
  try {
    program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (error) {
    throw new CompileError(`does not parse: ${error.message.replace(/\s*\(\d+:\d+\)$/, '')}`, error.loc, 'syntax');
  }
  for (const statement of program.body) {
    if (/^(Import|Export)/.test(statement.type)) {
      throw new CompileError(
        `a top-level ${statement.type} is outside the supported subset (the runner imports what the step's adaptors export)`,
        statement.loc.start,
      );
    }
  }
  const edits = new Edits(source);
  lazyState(program, edits);
  const deferred = promises(program, edits);

  const operations = [];
  const opCalls = [];
  const kept = [];
  for (const statement of program.body) {
    if (statement.type === 'EmptyStatement') continue;
    if (statement.type === 'ExpressionStatement' && statement.expression.type === 'CallExpression') {
      const call = statement.expression;
      operations.push(edits.of(call));
      opCalls.push(isPromiseCall(call) ? deferred.find((op) => op.start === call.start) ?? call : call);
    } else {
      kept.push(edits.of(statement));
    }
  }

  const declared = scopeDeclares(program);
  const imports = {};
  const provided = new Set();
  for (const name of [...danglingNames(program)].sort()) {
    const adaptor = adaptors.find((a) => a.exports.includes(name));
    if (!adaptor) continue;
    (imports[adaptor.specifier] ??= []).push(name);
    provided.add(name);
  }
  const unknown = [];
  for (const call of opCalls) {
    const name = rootName(call.callee);
    if (name !== null && !provided.has(name) && !declared.has(name) && !unknown.includes(name)) unknown.push(name);
  }
  const lines = Object.entries(imports).map(([specifier, names]) => `import { ${names.join(', ')} } from '${specifier}';`);
  if (deferred.length) lines.push("import { defer as _defer } from '@openfn/runtime';");
  if (adaptors.length) lines.push(`export * from '${adaptors[0].specifier}';`);
  lines.push(...kept);
  const body = [...(options.prelude ?? []), ...operations];
  if (options.injectFailure !== undefined) {
    body.push(`(state) => { throw new Error(${JSON.stringify(options.injectFailure)}); }`);
  }
  lines.push(`export default [\n${body.map((op) => `  ${op}`).join(',\n')}\n];`);
  return { code: lines.join('\n') + '\n', imports, operations, unknown, runtimeImports: deferred.length > 0 };
}
