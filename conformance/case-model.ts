import type { Api, Driver, DriverName, ListQuery, RawRequest, Reply } from './drivers/driver.ts';
import type { Capability, Credentials, Target, TargetSettings } from './targets/target.ts';
import type { Transport, RestVariant } from '../test/support/transports.ts';
import type { LogLine } from '../test/support/log-capture.ts';
import type { TargetControl } from './targets/control-client.ts';
import type { SeenSpan } from './targets/otlp-receiver.ts';

/**
 * The conformance case model (connectrpc/conformance style): cases are data naming the rules they
 * check; drivers carry them over a wire; no case knows which driver runs it.
 *
 * Strings in setup, input, auth and expectations may hold placeholders, resolved per run:
 *   {token} {token:bob}        the token of the acting user / of user `bob`
 *   {user} {user:bob}          username        {password} {password:bob}
 *   {userId} {userId:bob}      user id (the token's sub)
 *   {order:ref}                id of an order created in setup under `ref`
 *   {uuid}                     a fresh random UUID (no such order)
 *   {expiredToken}             a token signed with the target's secret whose exp has passed
 *   {foreignToken}             a well-formed token signed with another secret
 *   {noneToken}                the acting user's claims with alg none
 *   {tamperedToken}            the acting user's token with a changed payload
 */

export type GrpcCodeName =
  | 'OK'
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'PERMISSION_DENIED'
  | 'UNAUTHENTICATED'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'UNIMPLEMENTED'
  | 'RESOURCE_EXHAUSTED'
  | 'FAILED_PRECONDITION';

export type ShapeName = 'Order' | 'LoginResponse' | 'ListOrdersResponse' | 'RecentResponse' | 'Error' | 'HealthReport';

export interface BodyExpect {
  /** Exact field set and types of a spec 2.1 shape. */
  readonly shape?: ShapeName;
  /** Fields that must have exactly these values (placeholders resolved). */
  readonly fields?: Readonly<Record<string, unknown>>;
  /** ListOrdersResponse: the ids, exactly and in this order ({order:ref} placeholders). */
  readonly orders?: readonly string[];
  readonly ordersLength?: number;
  /** RecentResponse: the ids, exactly and in this order. */
  readonly recent?: readonly string[];
}

export interface HttpExpect {
  readonly status: number;
  /** The Error body's exact message; implies the Error shape and a JSON content type. */
  readonly error?: string;
  readonly body?: BodyExpect;
  /** Header values: exact strings, or patterns. */
  readonly headers?: Readonly<Record<string, string | RegExp>>;
  readonly contentType?: string;
  /** Substrings the raw text must contain. */
  readonly textIncludes?: readonly string[];
}

export interface GrpcExpect {
  readonly code: GrpcCodeName;
  /** Exact status message (our choice: the HTTP Error text, spec 7 rule 5). */
  readonly message?: string;
  readonly body?: BodyExpect;
}

/** Per API; an API without an expectation does not run the case (n/a). */
export interface Expectation {
  readonly http?: HttpExpect;
  readonly grpc?: GrpcExpect;
  /** REST expectations that differ by REST variant (spec 2.1 / 4.1 rule 9). */
  readonly variants?: Partial<Record<RestVariant, { readonly http: HttpExpect }>>;
}

export interface SetupOrder {
  readonly ref?: string;
  /** User label; the acting user by default. */
  readonly owner?: string;
  readonly item?: string;
  readonly quantity?: number;
  /** Create this many (refs get -1, -2 … suffixes when set). */
  readonly count?: number;
}

export interface Setup {
  /** User labels; the first is the acting user. Default ['me']. */
  readonly users?: readonly string[];
  /** Created through the driver, one after another, each in a later millisecond than the previous. */
  readonly orders?: readonly SetupOrder[];
  /** GetOrder calls made before the operation: [user label, order ref]. */
  readonly views?: readonly (readonly [string, string])[];
}

export type Operation =
  | { readonly op: 'login'; readonly input: { readonly username: unknown; readonly password: unknown } }
  | { readonly op: 'createOrder'; readonly input: Readonly<Record<string, unknown>> }
  | { readonly op: 'getOrder'; readonly input: { readonly id: string } }
  | { readonly op: 'listOrders'; readonly input: ListQuery }
  | { readonly op: 'recent'; readonly input?: undefined }
  /** REST only. */
  | { readonly op: 'raw'; readonly input: RawRequest };

interface CaseBase {
  /** kebab-case, unique; the last part of every test name RULE/transport/driver/backend/case. */
  readonly name: string;
  readonly rules: readonly string[];
  readonly needs?: readonly Capability[];
  /** A target of its own with these settings. */
  readonly target?: TargetSettings;
  /** Only on these transports (e.g. the one-port rules of spec 4.4 apply to the grpc transport). */
  readonly transports?: readonly string[];
  /** Only on these backends (real-backend-only or fake-only behaviour). */
  readonly backends?: readonly string[];
  /** Run after every other case of the column (checks over what the column observed). */
  readonly last?: boolean;
  /** Only in these driver columns (HTTP/1.1 framing has no HTTP/2 or gRPC form). */
  readonly drivers?: readonly DriverName[];
  /** A case that waits out a server timeout on purpose needs longer than the runner's default. */
  readonly timeoutMs?: number;
  /**
   * What the case checks is done by the listener and its HTTP/1.1 connections (framing, closes, the
   * connection cap, pipelining), not by the request's handler: it runs also on a column whose REST handler
   * is another transport's (Transport.restHandlerOf). A case limited to the rest-http1 driver is one too.
   */
  readonly connection?: boolean;
}

export type RequestCase = CaseBase &
  Operation & {
    readonly kind: 'request';
    readonly setup?: Setup;
    /** Authorization template; default `Bearer {token}` for every operation but login and raw. null sends none. */
    readonly auth?: string | null;
    readonly expect: Expectation;
  };

/** One REST exchange seen by a column's driver: method, path (query dropped) and status. */
export interface Observation {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** A user created and logged in for a flow. */
export interface Actor extends Credentials {
  readonly token: string;
  readonly userId: string;
  /** `Bearer <token>` */
  readonly auth: string;
}

/** What a flow gets: the driver, the target, and the same expectation checker as data cases. */
export interface FlowContext {
  readonly driver: Driver;
  readonly api: Api;
  readonly target: Target;
  readonly transport: { readonly name: string; readonly restVariant: RestVariant | undefined };
  /** A fresh user, logged in through the driver. */
  user(label?: string): Promise<Actor>;
  /** Creates an order through the driver and returns its id (asserts success). */
  order(actor: Actor, item?: string, quantity?: number): Promise<string>;
  /** A fresh user with one order of theirs (a widget unless named), the opening step of most flows. */
  userWithOrder(item?: string, quantity?: number): Promise<{ readonly me: Actor; readonly id: string }>;
  /** Checks a reply against the expectation for this driver's API; `label` names the step on failure. */
  check(reply: Reply, expectation: Expectation, label: string): void;
  /** Fails the case with a message naming the step. */
  assert(condition: unknown, message: string): void;
  /** Finished spans so far: the in-memory exporter in process, the runner's OTLP receiver black-box (capability spans). */
  spans(): readonly SeenSpan[];
  /** Records and faults: the test-control API on --embedded targets (capabilities rows, recorders, handlerFault). */
  control(): TargetControl;
  /** Log lines of an in-process target (capability logs). */
  logs(): readonly LogLine[];
  /** Polls until the predicate holds (logs and events arrive asynchronously); the deadline is a hang guard (HANG_GUARD_MS). */
  waitFor<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, label: string, timeoutMs?: number): Promise<T>;
  /** The admin listener's /metrics text. */
  scrape(): Promise<string>;
  /**
   * Another driver on the same target, for probes a flow needs whatever driver runs it (the one-port
   * rules compare wires; a REST probe from a gRPC column).
   */
  via(name: DriverName): Driver;
  sleep(ms: number): Promise<void>;
  /**
   * Lets `ms` pass on the service's clock: the simulator's clock is advanced where the target runs on it
   * (capability faults: in-process fakes, --embedded executables), else real time is waited out (real backends).
   */
  elapse(ms: number): Promise<void>;
  /** Every REST exchange this column's driver has made so far, on every target (for `last` cases). */
  observed(): readonly Observation[];
}

export interface FlowCase extends CaseBase {
  readonly kind: 'flow';
  /** Which APIs run it: a flow probing REST-only behaviour says 'rest'. Default both. */
  readonly api?: Api | 'any';
  run(t: FlowContext): Promise<void>;
}

export interface ProcessContext {
  /** The transport under test. */
  readonly transport: Transport;
  assert(condition: unknown, message: string): void;
}

/**
 * A check that needs the process itself (spawn the executable, build the composition root): kind
 * `process`, run once per transport in a `process` driver column. Core objects are checked by
 * rule-tagged unit tests instead (conformance/unit-rules.ts).
 */
export interface ProcessCase extends CaseBase {
  readonly kind: 'process';
  run(p: ProcessContext): Promise<void>;
}

export type Case = RequestCase | FlowCase | ProcessCase;

/** Which APIs a case can run on. */
export function caseApis(c: Case): readonly Api[] {
  if (c.kind === 'process') return [];
  if (c.kind === 'flow') return c.api === undefined || c.api === 'any' ? ['rest', 'grpc'] : [c.api];
  if (c.op === 'raw') return c.expect.http ? ['rest'] : [];
  const apis: Api[] = [];
  if (c.expect.http !== undefined || c.expect.variants !== undefined) apis.push('rest');
  if (c.expect.grpc !== undefined) apis.push('grpc');
  return apis;
}

/** A flow case, declared as a test is: name, rules, the options of CaseBase (and `api`), the body. */
export function flow(
  name: string,
  rules: readonly string[],
  options: Omit<FlowCase, 'kind' | 'name' | 'rules' | 'run'>,
  run: FlowCase['run'],
): FlowCase {
  return { kind: 'flow', name, rules, ...options, run };
}

export function processCase(
  name: string,
  rules: readonly string[],
  options: Omit<ProcessCase, 'kind' | 'name' | 'rules' | 'run'>,
  run: ProcessCase['run'],
): ProcessCase {
  return { kind: 'process', name, rules, ...options, run };
}

type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export function request(
  name: string,
  rules: readonly string[],
  operation: Without<RequestCase, 'kind' | 'name' | 'rules' | 'expect'>,
  expect: Expectation,
): RequestCase {
  return { kind: 'request', name, rules, ...operation, expect } as RequestCase;
}
