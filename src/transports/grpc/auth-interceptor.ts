/**
 * orders-grpc's authentication (spec 4.4 rules 4-5): which methods need no token, the step the unary
 * server runs on a call's headers before its message, and the check a protected method's handler makes.
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { authenticate, ErrMissingCredentials, type Principal } from '../../service/authenticate.ts';
import type { TokenService } from '../../service/token-service.ts';
import type { UnaryCall } from '../../../packages/one-port-grpc/index.ts';

/**
 * Spec 4.4 rule 4: the only methods callable without a token, by full method name (the wire identity,
 * spec 9 rule 1). Adding an unauthenticated method is an explicit edit here and nowhere else. Of
 * ordersv1.Orders only Login; the health protocol's two methods too (rule GRPC-health), because
 * Kubernetes probes and load balancers carry no token, and they say only SERVING or NOT_SERVING.
 */
export const AUTH_EXEMPT_METHODS: ReadonlySet<string> = new Set([
  '/ordersv1.Orders/Login',
  '/grpc.health.v1.Health/Check',
  '/grpc.health.v1.Health/Watch',
]);

/**
 * The authentication step of this transport (spec 4.4 rules 4-5, spec 5 rule 6: exactly one place),
 * run by the server on the call's headers before its message is read (rule GRPC-auth-before-body).
 * It reads the `authorization` metadata and verifies it with the same authenticate() as HTTP;
 * failures are thrown as they are and mapped by the one table (errors/table.ts).
 */
export function authInterceptor(
  tokens: TokenService,
): (method: string, headers: IncomingHttpHeaders) => Promise<Principal | undefined> | undefined {
  return (method, headers) => (AUTH_EXEMPT_METHODS.has(method) ? undefined : authenticate(headers.authorization, tokens));
}

/**
 * What a handler of a protected method calls. No principal means the interceptor exempted this
 * method, so the call is refused rather than served anonymously.
 */
export function requirePrincipal(call: UnaryCall<Principal>): Principal {
  if (call.principal === undefined) throw new ErrMissingCredentials();
  return call.principal;
}
