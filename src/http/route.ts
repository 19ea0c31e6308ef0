import type { AnyElysia, Context } from 'elysia';
import { z } from 'zod';
import type { Api, ApiBody, ApiKey, PathParams } from '../contract/api.ts';
import { built } from '../contract/lazy-schema.ts';
import type { Principal } from '../services/identity/principal.ts';
import { readJson } from './body.ts';
import { ROUTES, type RouteKey, type RoutePolicy } from './policy.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';

type Access<K extends RouteKey> = (typeof ROUTES)[K]['access'];
// The guard resolves a principal for every access but public; WebDAV's handler reads its own (anonymous OPTIONS has none).
type PrincipalOf<K extends RouteKey> = Access<K> extends 'public' | 'dav' ? unknown : { principal: Principal };

declare const encodedJson: unique symbol;
/** A JSON body already encoded (a cached list page), typed by what it holds. */
export type JsonBytes<T> = Uint8Array & { readonly [encodedJson]: T };

type Awaitable<T> = T | Promise<T>;
// A route the web app calls answers what the contract says (src/contract/api.ts); the rest answer anything.
type Answer<K extends RouteKey> = K extends ApiKey
  ? Api[K]['response'] | JsonBytes<Api[K]['response']> | (Api[K] extends { stream: true } ? Response : never)
  : unknown;
// Its body schema takes what the contract says the web app sends.
type BodyOf<K extends RouteKey> = K extends ApiKey ? ApiBody<K> : unknown;

type RouteContext<K extends RouteKey, B, Q> = {
  request: Request;
  set: Context['set'];
  server: Context['server'];
  params: PathParams<K>;
  /** The body, read after the guard and validated by the route's `body` schema; as read with `rawBody`. */
  body: B extends z.ZodType ? z.infer<B> : unknown;
  /** The query, validated by the route's `query` schema when the handler first reads it; raw strings without one. */
  query: Q extends z.ZodType ? z.infer<Q> : Record<string, string | undefined>;
} & PrincipalOf<K>;

export interface RouteSpec<K extends RouteKey, B extends z.ZodType<unknown, BodyOf<K>> | undefined, Q extends z.ZodType | undefined> {
  summary?: string;
  body?: B;
  /** How the body arrives, when not as JSON (a form post of a download). */
  read?: (request: Request) => Promise<unknown>;
  /** A body the service checks itself (its rules, its messages): described by this schema, handed over unparsed. */
  rawBody?: z.ZodType;
  query?: Q;
  /** multipart/form-data fields, described only: uploads stream them, so there is no zod schema to read. */
  form?: Record<string, string>;
  handler: (c: RouteContext<K, B, Q>) => Awaitable<Answer<K>>;
}

/** One route as declared, ready to be registered on its area's plugin. */
export interface Route {
  register: (app: AnyElysia) => void;
}

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(built(schema), { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** Name of the `detail` field that records the policy key a route was declared with (policy.test.ts reads it). */
export const DECLARED_AS = 'x-coffer-route';

type InputSpec = { body?: z.ZodType; query?: z.ZodType; form?: Record<string, string> };

/** The route's OpenAPI parameters and request body, from its schemas. */
function describeInput(spec: InputSpec): { parameters?: unknown[]; requestBody?: unknown } {
  const out: { parameters?: unknown[]; requestBody?: unknown } = {};
  if (spec.query) {
    const schema = jsonSchema(spec.query);
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    out.parameters = Object.entries(properties).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
  }
  if (spec.body) out.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(spec.body) } } };
  if (spec.form) {
    const properties = Object.fromEntries(
      Object.entries(spec.form).map(([name, description]) => [
        name,
        name === 'file' || name === 'files' ? { type: 'string', format: 'binary', description } : { type: 'string', description },
      ]),
    );
    out.requestBody = { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties } } } };
  }
  return out;
}

/**
 * The route's OpenAPI operation fragment: its summary and input schemas. The schemas become JSON Schema
 * when the document is first read, not at start-up (converting every route's was a tenth of it).
 */
function describe(key: RouteKey, spec: InputSpec & { summary?: string }) {
  const detail: { summary?: string; parameters?: unknown[]; requestBody?: unknown; [DECLARED_AS]: RouteKey } = { [DECLARED_AS]: key };
  if (spec.summary) detail.summary = spec.summary;
  let input: ReturnType<typeof describeInput> | undefined;
  const lazily = (field: 'parameters' | 'requestBody') =>
    Object.defineProperty(detail, field, { enumerable: true, get: () => (input ??= describeInput(spec))[field] });
  if (spec.query) lazily('parameters');
  if (spec.body || spec.form) lazily('requestBody');
  return detail;
}

/**
 * Declares a route once: its policy entry is looked up by key, its body is read (after the guard) and
 * validated, its query validated when read, its OpenAPI description built from the same schemas, and
 * its handler given the principal the guard resolved whenever the policy is not public.
 */
export function route<
  K extends RouteKey,
  B extends z.ZodType<unknown, BodyOf<K>> | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
>(key: K, spec: RouteSpec<K, B, Q>): Route {
  const policy: RoutePolicy = ROUTES[key];
  const [method, path] = key.split(' ') as [string, string];
  const withPrincipal = policy.access !== 'public' && policy.access !== 'dav';
  const embeddable = policy.embeddable === true;
  // Only what a handler is given: Elysia reads a handler's parameter list (its "sucrose" inference) and,
  // handed the whole context, would build the headers object and parse cookies for every request.
  const run = (c: Pick<Context, 'request' | 'set' | 'server' | 'params' | 'query'>, body: unknown) => {
    const principal = withPrincipal ? requestMeta(c.request).principal : undefined;
    // The guard resolves it for every such policy: missing here is a bug, not a refusal.
    if (withPrincipal && !principal) throw new Error(`${key}: the guard resolved no principal`);
    if (embeddable) c.set.headers['Cross-Origin-Resource-Policy'] = 'cross-origin';
    let query: unknown;
    const context = {
      request: c.request,
      set: c.set,
      server: c.server,
      params: c.params,
      body,
      principal,
      get query() {
        if (!spec.query) return c.query;
        query ??= validate(spec.query, c.query);
        return query;
      },
    };
    return spec.handler(context as unknown as RouteContext<K, B, Q>);
  };
  const { body: schema, read = readJson } = spec;
  const handle = schema
    ? async ({ request, set, server, params, query }: Context) =>
        run({ request, set, server, params, query }, validate(schema, await read(request)))
    : spec.rawBody
      ? async ({ request, set, server, params, query }: Context) => run({ request, set, server, params, query }, await read(request))
      : ({ request, set, server, params, query }: Context) => run({ request, set, server, params, query }, undefined);
  const detail = describe(key, { ...spec, body: spec.body ?? spec.rawBody });
  return { register: (app) => void app.route(method, path, handle as never, { detail: detail as never }) };
}

/**
 * An area's routes as a plugin function: `app.use(routes([...]))` registers them on that app itself. An Elysia
 * instance per area held a second copy of every route (its own router and history) beside the app's; an area
 * that adds a hook of its own applies this to its own instance.
 */
export function routes(declared: Route[]): (app: AnyElysia) => AnyElysia {
  return (app) => {
    for (const r of declared) r.register(app);
    return app;
  };
}
