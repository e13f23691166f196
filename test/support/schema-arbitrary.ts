/**
 * JSON schema (the OpenAPI 3.0 subset openapi.yaml uses) to fast-check arbitraries, for the contract fuzzer:
 * `valid` builds values the schema accepts, `hostile` builds values of every shape that a server must refuse
 * cleanly (wrong types, huge and odd strings, deep nesting).
 */
import fc from 'fast-check';
import type { OpenAPIV3 } from 'openapi-types';

type Schema = OpenAPIV3.SchemaObject;
type Resolve = <T>(value: T | OpenAPIV3.ReferenceObject) => T;

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  email: fc.emailAddress().filter((e) => e.length <= 254),
  uuid: fc.uuid(),
  'date-time': fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  date: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  uri: fc.webUrl(),
};

/** Strings that break naive code: NUL, emoji, right-to-left marks, lone surrogates, SQL and path tricks, huge. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '', ' ', '\u0000', 'a\u0000b', '😀'.repeat(50), '\u202Eevil', '\uD800', '\uDFFF\uD800', 'null', 'undefined', 'NaN', '-1', '1e309',
    "' OR 1=1 --", '"; DROP TABLE users; --', '../../../etc/passwd', '%00', '%', '\\', '{{7*7}}', '${jndi:x}', '<script>alert(1)</script>',
    '\r\n\r\nX-Injected: 1', 'ǅ\u0301\u0301\u0301', '𝕢𝕦𝕒𝕣𝕣𝕪', 'x'.repeat(10_000),
  ),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer({ min: 1000, max: 200_000 }).map((n) => 'é'.repeat(n)),
);

/** Any JSON value, including deep nesting (within what JSON.stringify handles comfortably). */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), Number.MAX_VALUE, [], {}),
  nastyString,
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 50, max: 2000 }).map((depth) => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i += 1) value = i % 2 ? [value] : { a: value };
    return value;
  }),
);

/** Nesting (schema levels) past which a recursive schema stops recursing: 4 levels of SearchFilter. */
const MAX_DEPTH = 12;

export class SchemaArbitraries {
  constructor(private readonly resolve: Resolve) {}

  /** Values the schema accepts. */
  valid(input: Schema | OpenAPIV3.ReferenceObject, depth = 0): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    const base = this.validInner(schema, depth);
    return schema.nullable ? fc.oneof({ weight: 5, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) }) : base;
  }

  private validInner(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    if (schema.allOf?.length) {
      if (schema.allOf.length === 1) return this.valid(schema.allOf[0], depth);
      const parts = schema.allOf.map((part) => this.valid(part, depth + 1));
      return fc.tuple(...parts).map((values) => Object.assign({}, ...values.filter((v) => typeof v === 'object' && v !== null)));
    }
    // A recursive schema (SearchFilter's and/or/not hold filters) would build arbitraries forever: past MAX_DEPTH only
    // the first alternative is built, which in openapi.yaml's recursive schemas is the leaf (a FilterCondition).
    const alternatives = schema.oneOf?.length ? schema.oneOf : schema.anyOf;
    if (alternatives?.length) {
      if (depth > MAX_DEPTH) return this.valid(alternatives[0]!, depth + 1);
      return fc.oneof(...alternatives.map((s) => this.valid(s, depth + 1)));
    }
    if (schema.enum?.length) return fc.constantFrom(...schema.enum);
    const type = schema.type ?? (schema.properties ? 'object' : undefined);
    switch (type) {
      case 'string':
        return this.string(schema);
      case 'integer': {
        const min = schema.minimum ?? -1_000_000;
        const max = schema.maximum ?? 1_000_000;
        const lo = Math.ceil(schema.exclusiveMinimum === true ? min + 1 : min);
        const hi = Math.floor(schema.exclusiveMaximum === true ? max - 1 : max);
        return fc.oneof(fc.constantFrom(lo, hi), fc.integer({ min: lo, max: hi }));
      }
      case 'number': {
        const min = schema.minimum ?? -1e6;
        const max = schema.maximum ?? 1e6;
        return fc.oneof(fc.constantFrom(min, max), fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
      }
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const itemSchema = (schema as OpenAPIV3.ArraySchemaObject).items;
        const items = itemSchema ? this.valid(itemSchema, depth + 1) : fc.jsonValue({ maxDepth: 1 });
        const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, (schema.minItems ?? 0) + 5) };
        return schema.uniqueItems
          ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
          : fc.array(items, constraints);
      }
      case 'object': {
        const properties = schema.properties ?? {};
        const required = new Set(schema.required ?? []);
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, property] of Object.entries(properties)) record[name] = this.valid(property, depth + 1);
        const keys = Object.keys(record);
        const obj = fc.record(record, { requiredKeys: keys.filter((k) => required.has(k)) });
        const extra = schema.additionalProperties;
        if (keys.length === 0 && extra && extra !== true) {
          return fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), this.valid(extra, depth + 1), { maxKeys: 3 });
        }
        const minProps = schema.minProperties ?? 0;
        return minProps > 0 ? obj.filter((o) => Object.keys(o).length >= minProps) : obj;
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private string(schema: Schema): fc.Arbitrary<string> {
    const min = schema.minLength ?? 0;
    const max = schema.maxLength ?? Math.max(min, 40);
    const fits = (s: string) => [...s].length >= min && [...s].length <= max;
    if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
    const format = schema.format ? FORMATS[schema.format] : undefined;
    if (format) return format.filter(fits);
    return fc.oneof(
      fc.string({ minLength: min, maxLength: Math.min(max, min + 30) }),
      fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, min + 10) }).filter(fits),
      fc.constant(''.padEnd(min, 'z') + 'y'.repeat(Math.max(0, Math.min(max, 5000) - min))),
    );
  }

  /**
   * A value the schema (probably) refuses: the wrong type, out of range, or a valid object with one
   * required field dropped, an extra field added, or one property replaced by a hostile value.
   */
  invalid(input: Schema | OpenAPIV3.ReferenceObject): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    const options: fc.Arbitrary<unknown>[] = [anyJson];
    const properties = schema.properties ?? {};
    const names = Object.keys(properties);
    const valid = this.valid(schema) as fc.Arbitrary<Record<string, unknown>>;
    if (names.length > 0) {
      const required = schema.required ?? [];
      if (required.length > 0) {
        options.push(fc.tuple(valid, fc.constantFrom(...required)).map(([o, name]) => {
          const copy = { ...o };
          delete copy[name];
          return copy;
        }));
      }
      options.push(fc.tuple(valid, fc.constantFrom('role', 'id', 'userId', 'isAdmin', '__proto__', 'constructor', 'passwordHash', 'zz'), anyJson).map(([o, name, value]) => {
        const copy = JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
        Object.defineProperty(copy, name, { value, enumerable: true, configurable: true, writable: true });
        return copy;
      }));
      options.push(fc.tuple(valid, fc.constantFrom(...names), anyJson).map(([o, name, value]) => ({ ...o, [name]: value })));
      options.push(fc.array(valid, { maxLength: 2 }));
    }
    if (schema.type === 'string') {
      options.push(nastyString);
      if (schema.maxLength !== undefined) options.push(fc.constant('w'.repeat(schema.maxLength + 1)));
    }
    if (schema.type === 'integer' || schema.type === 'number') {
      options.push(fc.constantFrom(-1, 0, 1.5, 1e21, -1e21, (schema.maximum ?? 0) + 1, (schema.minimum ?? 0) - 1));
    }
    return fc.oneof(...options);
  }
}
