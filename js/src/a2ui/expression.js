// The `${…}` expressions of `formatString` (A2UI v0.9 basic catalog). A template is literal text
// with interpolations; an interpolation holds one expression:
//   ${/abs/path}  ${rel/path}         a data binding (relative inside a template item)
//   ${fn(a: expr, b: expr)}           a catalog function call with named arguments
//   ${'text'}  ${"text"}  ${12.5}  ${true}  ${false}  ${null}   literals
//   ${${…}}                           a nested interpolation (its value)
// `\${` is a literal "${". The parser only builds values shaped like the protocol's own dynamic
// values (`{path}`, `{call, args}`, literals), so evaluation is the renderer's ordinary `resolve`.
// Depth and length are capped so that a hostile template cannot exhaust the stack.

export const MAX_DEPTH = 10;
export const MAX_TEMPLATE = 10_000;

/** @typedef {string | number | boolean | null | { path: string } | { call: string, args: Record<string, any> }} Expr */

export class ExpressionError extends Error {}

/**
 * Split a template into literal strings and expressions.
 * @param {string} text
 * @returns {(string | Expr)[]}
 */
export function parseTemplate(text) {
  if (typeof text !== "string") return [text];
  if (text.length > MAX_TEMPLATE) throw new ExpressionError(`The template is longer than ${MAX_TEMPLATE} characters.`);
  const p = new Parser(text);
  /** @type {(string | Expr)[]} */
  const parts = [];
  let lit = "";
  while (p.i < text.length) {
    if (text.startsWith("\\${", p.i)) {
      lit += "${";
      p.i += 3;
    } else if (text.startsWith("${", p.i)) {
      if (lit) parts.push(lit);
      lit = "";
      p.i += 2;
      parts.push(p.interpolation(1));
    } else {
      lit += text[p.i++];
    }
  }
  if (lit) parts.push(lit);
  return parts;
}

/**
 * Evaluate a template: each expression through `evaluate`, null and undefined as "", objects
 * and arrays as JSON.
 * @param {string} text
 * @param {(expr: Expr) => unknown} evaluate
 */
export function renderTemplate(text, evaluate) {
  return parseTemplate(text)
    .map((part) => (typeof part === "string" ? part : asText(evaluate(part))))
    .join("");
}

/** A value as interpolated text. */
export function asText(/** @type {unknown} */ value) {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?\d+(\.\d+)?([eE][-+]?\d+)?/y;
const PATH_STOP = new Set([",", ")", "}", " ", "\t", "\n", "\r"]);

class Parser {
  constructor(/** @type {string} */ text) {
    this.text = text;
    this.i = 0;
  }

  /** @returns {never} */
  fail(/** @type {string} */ what) {
    throw new ExpressionError(`${what} at character ${this.i} of the template.`);
  }

  ws() {
    while (/\s/.test(this.text[this.i] ?? "")) this.i++;
  }

  /** After "${": one expression, then "}". */
  interpolation(/** @type {number} */ depth) {
    if (depth > MAX_DEPTH) this.fail("Expressions are nested too deeply");
    this.ws();
    const value = this.text[this.i] === "}" ? "" : this.expression(depth);
    this.ws();
    if (this.i >= this.text.length) this.fail("Unclosed interpolation");
    if (this.text[this.i] !== "}") this.fail("Unexpected characters in the interpolation");
    this.i++;
    return value;
  }

  /** @returns {Expr} */
  expression(/** @type {number} */ depth) {
    if (depth > MAX_DEPTH) this.fail("Expressions are nested too deeply");
    this.ws();
    const t = this.text;
    const ch = t[this.i];
    if (t.startsWith("${", this.i)) {
      this.i += 2;
      return this.interpolation(depth + 1);
    }
    if (ch === "'" || ch === '"') return this.string(ch);
    NUMBER.lastIndex = this.i;
    const num = NUMBER.exec(t);
    if (num && !isPathChar(t[this.i + num[0].length])) {
      this.i += num[0].length;
      return Number(num[0]);
    }
    IDENT.lastIndex = this.i;
    const id = IDENT.exec(t);
    if (id) {
      const end = this.i + id[0].length;
      let j = end;
      while (/\s/.test(t[j] ?? "")) j++;
      if (t[j] === "(") {
        this.i = j + 1;
        return { call: id[0], args: this.args(depth + 1) };
      }
      if (!isPathChar(t[end])) {
        const kw = { true: true, false: false, null: null }[id[0]];
        if (kw !== undefined) {
          this.i = end;
          return kw;
        }
      }
    }
    return this.path();
  }

  /** After "(": `name: expr, …` then ")". */
  args(/** @type {number} */ depth) {
    /** @type {Record<string, any>} */
    const args = {};
    this.ws();
    if (this.text[this.i] === ")") {
      this.i++;
      return args;
    }
    for (;;) {
      this.ws();
      IDENT.lastIndex = this.i;
      const id = IDENT.exec(this.text);
      if (!id) this.fail("Expected an argument name");
      this.i += /** @type {RegExpExecArray} */ (id)[0].length;
      this.ws();
      if (this.text[this.i] !== ":") this.fail("Expected ':' after an argument name");
      this.i++;
      const name = /** @type {RegExpExecArray} */ (id)[0];
      if (name === "__proto__" || name === "constructor" || name === "prototype") this.fail("A forbidden argument name");
      args[name] = this.expression(depth);
      this.ws();
      if (this.text[this.i] === ",") {
        this.i++;
        continue;
      }
      if (this.text[this.i] === ")") {
        this.i++;
        return args;
      }
      this.fail("Expected ')' to close the call");
    }
  }

  string(/** @type {string} */ quote) {
    const escapes = /** @type {Record<string, string>} */ ({ n: "\n", t: "\t", r: "\r" });
    let out = "";
    this.i++;
    while (this.i < this.text.length) {
      const c = this.text[this.i++];
      if (c === quote) return out;
      if (c === "\\" && this.i < this.text.length) {
        const n = this.text[this.i++];
        out += escapes[n] ?? n;
      } else out += c;
    }
    return this.fail("Unclosed string");
  }

  path() {
    const start = this.i;
    while (this.i < this.text.length && !PATH_STOP.has(this.text[this.i])) this.i++;
    if (this.i === start) this.fail("Expected an expression");
    return { path: this.text.slice(start, this.i) };
  }
}

function isPathChar(/** @type {string | undefined} */ c) {
  return c !== undefined && !PATH_STOP.has(c) && c !== "(";
}
