/**
 * A fast conformance test compiled from a zod schema, for the records a service reads: true only
 * when zod would accept the value AND hand back an equal one (nothing stripped, defaulted,
 * transformed or frozen), so the value can be used as it is; false means "ask zod", which then
 * gives its error or its own output. zod's safeParse builds a new object for every object it
 * checks (a `links` bundle of 40 targets: some 10 µs); the compiled test reads and builds nothing.
 *
 * It understands the parts of zod the topic schemas use — objects (unknown keys stripped by
 * default), strings, finite numbers, booleans, literals, string enums, optional, nullable,
 * arrays, records with plain string keys, discriminated unions, custom checks and refinements,
 * and the checks min/max length, regex, greater/less than and integer. A schema with anything
 * else compiles to nothing (conformanceOf answers undefined): its records always go through zod.
 * Meant for values made by JSON.parse or a codec (plain objects and arrays).
 *
 * The test is generated as JavaScript, one function per schema node with its checks inline (as
 * zod does for its own object parsers): closures calling closures through arrays made every call
 * site megamorphic and ran at half that speed.
 */
import type { z } from 'zod';

/** True: zod accepts `value` and returns it unchanged. False: ask zod (also when a check throws). */
export type Conforms = (value: unknown) => boolean;

/** The part of zod 4's internals read here: every schema and check has `_zod.def`. */
interface Def {
  readonly type?: string;
  readonly check?: string;
  readonly checks?: readonly Node[];
  readonly coerce?: boolean;
  readonly [field: string]: unknown;
}
interface Node {
  readonly _zod: { readonly def: Def };
}

const compiled = new WeakMap<object, Conforms | null>();

/** The compiled test of `schema` (made once per schema), or undefined when zod must do it all. */
export function conformanceOf(schema: z.ZodType): Conforms | undefined {
  let test = compiled.get(schema);
  if (test === undefined) {
    test = generate(schema as unknown as Node) ?? null;
    compiled.set(schema, test);
  }
  return test ?? undefined;
}

function defOf(node: unknown): Def | undefined {
  const def = (node as Partial<Node> | null)?._zod?.def;
  return typeof def === 'object' && def !== null ? def : undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A literal or enum value written into the generated code (strings, finite numbers, booleans). */
function isPlainValue(x: unknown): x is string | number | boolean {
  return typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x));
}

function source(x: string | number | boolean): string {
  return typeof x === 'string' ? JSON.stringify(x) : String(x);
}

/** Builds the functions of one schema: `f<n>(v)` per node, constants (patterns, check functions) in `c`. */
class Generator {
  readonly constants: unknown[] = [];
  readonly functions: string[] = [];
  private readonly names = new Map<Node, string>();

  constant(x: unknown): string {
    this.constants.push(x);
    return `c[${this.constants.length - 1}]`;
  }

  /** The name of the function testing `node`, or undefined when it is not one understood here. */
  node(node: unknown): string | undefined {
    const def = defOf(node);
    if (!def) return undefined;
    const known = this.names.get(node as Node);
    if (known !== undefined) return known;
    const name = `f${this.names.size}`;
    // Named before its body is made, so a node met twice (httpUrl) is one function.
    this.names.set(node as Node, name);
    const type = this.type(def);
    const checks = type === undefined ? undefined : this.checks(def);
    if (type === undefined || checks === undefined) return undefined;
    this.functions.push(`function ${name}(v) {\n${type}\n${checks}\nreturn true;\n}`);
    return name;
  }

  /** Statements that return false unless `v` has the node's type. */
  private type(def: Def): string | undefined {
    if (def.coerce) return undefined;
    switch (def.type) {
      case 'string':
        return `if (typeof v !== 'string') return false;`;
      case 'number':
        // zod 4 takes finite numbers only.
        return `if (typeof v !== 'number' || !Number.isFinite(v)) return false;`;
      case 'boolean':
        return `if (typeof v !== 'boolean') return false;`;
      case 'literal': {
        const values = def.values as readonly unknown[];
        if (!values.every(isPlainValue)) return undefined;
        return `if (${values.map((x) => `v !== ${source(x)}`).join(' && ')}) return false;`;
      }
      case 'enum': {
        const values = Object.values(def.entries as Record<string, unknown>);
        if (!values.every((x) => typeof x === 'string')) return undefined;
        return `if (!${this.constant(new Set(values))}.has(v)) return false;`;
      }
      case 'optional':
      case 'nullable': {
        // Checks on the wrapper itself would see the absent value too: left to zod.
        if ((def.checks?.length ?? 0) > 0) return undefined;
        const inner = this.node(def.innerType);
        return inner && `if (v === ${def.type === 'optional' ? 'undefined' : 'null'}) return true;\nif (!${inner}(v)) return false;`;
      }
      case 'array': {
        const element = this.node(def.element);
        return element && `if (!Array.isArray(v)) return false;\nfor (let i = 0; i < v.length; i++) if (!${element}(v[i])) return false;`;
      }
      case 'object':
        return this.object(def);
      case 'record':
        return this.record(def);
      case 'union':
        return this.discriminatedUnion(def);
      case 'custom':
        return typeof def.fn === 'function' ? this.call(def.fn) : undefined;
      default:
        return undefined;
    }
  }

  /** A check function zod calls: truthy passes; a promise (an async check) is left to zod. */
  private call(fn: unknown): string {
    return `{ const r = ${this.constant(fn)}(v); if (!r || r instanceof Promise) return false; }`;
  }

  private object(def: Def): string | undefined {
    // A catchall (strict, passthrough, loose) changes what happens to unknown keys.
    if (def.catchall !== undefined) return undefined;
    const shape = def.shape as Record<string, Node>;
    const keys = Object.keys(shape);
    const lines = [`if (!isPlainObject(v)) return false;`];
    // zod strips unknown keys: such a value is not returned as it is.
    if (keys.length > 0) lines.push(`for (const k in v) switch (k) { ${keys.map((k) => `case ${JSON.stringify(k)}:`).join(' ')} break; default: return false; }`);
    else lines.push(`for (const k in v) return false;`);
    for (const key of keys) {
      const test = this.node(shape[key]);
      if (!test) return undefined;
      lines.push(`if (!${test}(v[${JSON.stringify(key)}])) return false;`);
    }
    return lines.join('\n');
  }

  private record(def: Def): string | undefined {
    const keyDef = defOf(def.keyType);
    // Keys as plain strings only; enumerated or checked keys are zod's.
    if (keyDef?.type !== 'string' || (keyDef.checks?.length ?? 0) > 0 || keyDef.coerce) return undefined;
    const value = this.node(def.valueType);
    if (!value) return undefined;
    return [
      `if (!isPlainObject(v) || Object.getOwnPropertySymbols(v).length > 0) return false;`,
      // zod drops a __proto__ key
      `for (const k in v) if (k === '__proto__' || !Object.hasOwn(v, k) || !${value}(v[k])) return false;`,
    ].join('\n');
  }

  private discriminatedUnion(def: Def): string | undefined {
    const discriminator = def.discriminator;
    if (typeof discriminator !== 'string') return undefined;
    const cases: string[] = [];
    const seen = new Set<unknown>();
    for (const option of def.options as readonly Node[]) {
      const tagDef = defOf((option._zod.def.shape as Record<string, Node> | undefined)?.[discriminator]);
      const tags = tagDef?.type === 'literal' ? (tagDef.values as readonly unknown[]) : tagDef?.type === 'enum' ? Object.values(tagDef.entries as Record<string, unknown>) : undefined;
      const test = this.node(option);
      if (!tags || !test || !tags.every(isPlainValue)) return undefined;
      for (const tag of tags) {
        // the same tag on two options: zod's rule for it is not copied here
        if (seen.has(tag)) return undefined;
        seen.add(tag);
        cases.push(`case ${source(tag)}: return ${test}(v);`);
      }
    }
    return `if (!isPlainObject(v)) return false;\nswitch (v[${JSON.stringify(discriminator)}]) { ${cases.join(' ')} default: return false; }`;
  }

  /** Statements that return false unless every check of the node passes. */
  private checks(def: Def): string | undefined {
    const lines: string[] = [];
    for (const check of def.checks ?? []) {
      const c = check._zod.def;
      switch (c.check) {
        case 'min_length':
          lines.push(`if (v.length < ${Number(c.minimum)}) return false;`);
          break;
        case 'max_length':
          lines.push(`if (v.length > ${Number(c.maximum)}) return false;`);
          break;
        case 'length_equals':
          lines.push(`if (v.length !== ${Number(c.length)}) return false;`);
          break;
        case 'string_format': {
          if (c.format !== 'regex' || !(c.pattern instanceof RegExp)) return undefined;
          const pattern = this.constant(c.pattern);
          lines.push(`${pattern}.lastIndex = 0;\nif (!${pattern}.test(v)) return false;`);
          break;
        }
        case 'greater_than':
          lines.push(`if (!(v ${c.inclusive ? '>=' : '>'} ${this.constant(c.value)})) return false;`);
          break;
        case 'less_than':
          lines.push(`if (!(v ${c.inclusive ? '<=' : '<'} ${this.constant(c.value)})) return false;`);
          break;
        case 'number_format':
          if (c.format === 'safeint') lines.push(`if (!Number.isSafeInteger(v)) return false;`);
          else if (c.format !== 'float64') return undefined;
          break;
        case 'custom':
          if (typeof c.fn !== 'function') return undefined;
          lines.push(this.call(c.fn));
          break;
        default:
          // Others (string formats, multiples, and the 'overwrite' of trim/toLowerCase, which
          // changes the value) are zod's alone.
          return undefined;
      }
    }
    // Length checks apply where there is a length; zod's own type test came first.
    if (lines.length > 0 && (def.type === 'string' || def.type === 'array' || def.type === 'number' || def.type === 'custom' || def.type === 'record' || def.type === 'object')) return lines.join('\n');
    return lines.length === 0 ? '' : undefined;
  }
}

function generate(schema: Node): Conforms | undefined {
  const g = new Generator();
  const root = g.node(schema);
  if (root === undefined) return undefined;
  // Generated from the schema's own definition (no outside text): the same technique zod uses.
  const make = new Function('c', 'isPlainObject', `'use strict';\n${g.functions.join('\n')}\nreturn ${root};`) as (c: readonly unknown[], isPlain: typeof isPlainObject) => Conforms;
  const test = make(g.constants, isPlainObject);
  // A refinement that throws is zod's to report.
  return (value) => {
    try {
      return test(value);
    } catch {
      return false;
    }
  };
}
