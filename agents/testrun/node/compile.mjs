// A small stand-in for @openfn/compiler (not served by the npm registry here):
// turns a job body into the ES module @openfn/runtime executes.
//
// Supported subset (exactly what Planwright's generators write; anything else
// is a compile error, never a silent guess):
//   * the body parses as an ES module (acorn, ecmaVersion "latest");
//   * every top-level statement is an expression statement whose expression
//     is a call: `get('x');`, `fn(state => ...);`, `http.post(...)`
//     (empty statements and comments are allowed; declarations, imports,
//     exports, `.then()` chains on the top level are not);
//   * lazy state: an argument of a top-level call that uses `$` outside any
//     nested function becomes `(state) => <argument with $ -> state>`; `$`
//     inside a nested function is outside the subset;
//   * imports: every identifier the body references (not declared anywhere in
//     the body, not a property name) that an adaptor of the step exports is
//     imported by name from the first adaptor that exports it, and
//     `export * from '<first adaptor>'` is added, as @openfn/compiler does (the
//     runtime then uses that adaptor's `execute`);
//   * the module's default export is the array of top-level calls, in order.
// A top-level call whose root name no adaptor exports and no declaration
// provides is reported in `unknown` (the runtime then fails that step with a
// ReferenceError, as it would after the real compiler).
import * as acorn from 'acorn';

const FUNCTION_TYPES = new Set(['FunctionExpression', 'ArrowFunctionExpression', 'FunctionDeclaration']);

export class CompileError extends Error {
  constructor(message, loc) {
    super(loc ? `line ${loc.line}, column ${loc.column + 1}: ${message}` : message);
    this.line = loc?.line;
    this.column = loc ? loc.column + 1 : undefined;
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

// Names declared anywhere in the body (params, variables, functions, classes, catch params).
function declaredNames(root) {
  const names = new Set();
  const visit = (node) => {
    if (FUNCTION_TYPES.has(node.type)) {
      if (node.id) names.add(node.id.name);
      for (const param of node.params) bindingNames(param, names);
    } else if (node.type === 'VariableDeclarator') {
      bindingNames(node.id, names);
    } else if (node.type === 'ClassDeclaration' || node.type === 'ClassExpression') {
      if (node.id) names.add(node.id.name);
    } else if (node.type === 'CatchClause') {
      bindingNames(node.param, names);
    }
    for (const [, child] of children(node)) visit(child);
  };
  visit(root);
  return names;
}

// Identifiers in reference position (not property names, not binding sites).
function referencedNames(root) {
  const names = new Set();
  const visit = (node, parent, key) => {
    if (node.type === 'Identifier') {
      const isProperty =
        (parent?.type === 'MemberExpression' && key === 'property' && !parent.computed) ||
        ((parent?.type === 'Property' || parent?.type === 'MethodDefinition' || parent?.type === 'PropertyDefinition') &&
          key === 'key' &&
          !parent.computed);
      const isLabel = parent?.type === 'LabeledStatement' || parent?.type === 'BreakStatement' || parent?.type === 'ContinueStatement';
      if (!isProperty && !isLabel) names.add(node.name);
      return;
    }
    for (const [childKey, child] of children(node)) visit(child, node, childKey);
  };
  visit(root, null, null);
  return names;
}

// `$` identifiers of an argument, split by whether a nested function encloses them.
function dollarUses(node, insideFunction = false, found = { outside: [], inside: [] }, parent = null, key = null) {
  if (node.type === 'Identifier' && node.name === '$') {
    const isProperty = parent?.type === 'MemberExpression' && key === 'property' && !parent.computed;
    if (!isProperty) (insideFunction ? found.inside : found.outside).push(node);
    return found;
  }
  const nested = insideFunction || FUNCTION_TYPES.has(node.type);
  for (const [childKey, child] of children(node)) dollarUses(child, nested, found, node, childKey);
  return found;
}

function rootName(callee) {
  let node = callee;
  while (node.type === 'MemberExpression') node = node.object;
  return node.type === 'Identifier' ? node.name : null;
}

function argumentSource(source, arg) {
  const { outside, inside } = dollarUses(arg);
  if (inside.length) {
    throw new CompileError('`$` inside a nested function is outside the supported lazy-state subset', inside[0].loc.start);
  }
  const text = source.slice(arg.start, arg.end);
  if (!outside.length) return text;
  let out = '';
  let cursor = arg.start;
  for (const use of [...outside].sort((a, b) => a.start - b.start)) {
    out += source.slice(cursor, use.start) + 'state';
    cursor = use.end;
  }
  out += source.slice(cursor, arg.end);
  return `(state) => (${out})`;
}

function operationSource(source, call) {
  let out = source.slice(call.start, call.callee.end);
  let cursor = call.callee.end;
  for (const arg of call.arguments) {
    out += source.slice(cursor, arg.start) + argumentSource(source, arg);
    cursor = arg.end;
  }
  return out + source.slice(cursor, call.end);
}

/**
 * Compile one job body.
 * @param {string} source the step's `expression`
 * @param {{specifier: string, exports: string[]}[]} adaptors the step's adaptors, first first
 * @param {{injectFailure?: string, prelude?: string[]}} options `injectFailure`: append an operation
 *   that throws this message (evals only); `prelude`: operations (source) run before the body's
 * @returns {{code: string, imports: Record<string, string[]>, operations: string[], unknown: string[]}}
 */
export function compileJob(source, adaptors, options = {}) {
  let program;
  try {
    program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (error) {
    throw new CompileError(`does not parse: ${error.message.replace(/\s*\(\d+:\d+\)$/, '')}`, error.loc);
  }
  const operations = [];
  const calls = [];
  for (const statement of program.body) {
    if (statement.type === 'EmptyStatement') continue;
    if (statement.type !== 'ExpressionStatement' || statement.expression.type !== 'CallExpression') {
      const what = statement.type === 'ExpressionStatement' ? statement.expression.type : statement.type;
      throw new CompileError(`a top-level ${what} is outside the supported subset (top-level operation calls only)`, statement.loc.start);
    }
    const call = statement.expression;
    if (rootName(call.callee) === null) {
      throw new CompileError('an operation must be called by name (`get(...)`, `http.post(...)`)', call.loc.start);
    }
    calls.push(call);
    operations.push(operationSource(source, call));
  }
  const declared = declaredNames(program);
  const referenced = referencedNames(program);
  const imports = {};
  const provided = new Set();
  for (const name of [...referenced].sort()) {
    if (declared.has(name)) continue;
    const adaptor = adaptors.find((a) => a.exports.includes(name));
    if (!adaptor) continue;
    (imports[adaptor.specifier] ??= []).push(name);
    provided.add(name);
  }
  const unknown = [];
  for (const call of calls) {
    const name = rootName(call.callee);
    if (!provided.has(name) && !declared.has(name) && !unknown.includes(name)) unknown.push(name);
  }
  const lines = Object.entries(imports).map(([specifier, names]) => `import { ${names.join(', ')} } from '${specifier}';`);
  if (adaptors.length) lines.push(`export * from '${adaptors[0].specifier}';`);
  const body = [...(options.prelude ?? []), ...operations];
  if (options.injectFailure !== undefined) {
    body.push(`(state) => { throw new Error(${JSON.stringify(options.injectFailure)}); }`);
  }
  lines.push(`export default [\n${body.map((op) => `  ${op}`).join(',\n')}\n];`);
  return { code: lines.join('\n') + '\n', imports, operations, unknown };
}
