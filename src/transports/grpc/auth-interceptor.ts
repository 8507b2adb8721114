/**
 * orders-grpc's authentication (spec 4.4 rules 4-5): which methods need no token, the step the unary
 * server runs on a call's headers before its message, and the check a protected method's handler makes.
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { authenticate, ErrMissingCredentials, type Principal } from '../../service/authenticate.ts';
import type { TokenService } from '../../service/token-service.ts';
import type { UnaryCall } from '../../../packages/one-port-grpc/index.ts';

/**
 * Spec 4.4 rule 4: the only methods callable without a token, by full method name; adding one is an edit
 * here and nowhere else. Health too (rule GRPC-health): probes carry no token, and it says only SERVING or not.
 */
const AUTH_EXEMPT_METHODS: ReadonlySet<string> = new Set([
  '/ordersv1.Orders/Login',
  '/grpc.health.v1.Health/Check',
  '/grpc.health.v1.Health/Watch',
]);

/**
 * Run by the server on a call's headers before its message is read (rule GRPC-auth-before-body): the
 * `authorization` metadata through the same authenticate() as HTTP (spec 5 rule 6); failures go to the error table.
 */
export function authInterceptor(
  tokens: TokenService,
): (method: string, headers: IncomingHttpHeaders) => Promise<Principal | undefined> | undefined {
  return (method, headers) => (AUTH_EXEMPT_METHODS.has(method) ? undefined : authenticate(headers.authorization, tokens));
}

/** A protected method's caller; none means the method was exempted, so the call is refused, never served anonymously. */
export function requirePrincipal(call: UnaryCall<Principal>): Principal {
  if (call.principal === undefined) throw new ErrMissingCredentials();
  return call.principal;
}
