import { createContextKey, type ContextValues, type Interceptor } from '@connectrpc/connect';
import type { DescMethod } from '@bufbuild/protobuf';
import { authenticate, ErrMissingCredentials, type Principal } from '../../service/authenticate.ts';
import type { TokenService } from '../../service/token-service.ts';

/**
 * Spec 4.4 rule 4: the only methods callable without a token, by full method name (the wire identity,
 * spec 9 rule 1). Adding an unauthenticated method is an explicit edit here and nowhere else.
 */
export const AUTH_EXEMPT_METHODS: ReadonlySet<string> = new Set(['/ordersv1.Orders/Login']);

/** Where the interceptor leaves the caller for the handlers (spec 4.4 rule 5, 5 rule 6). */
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: 'authenticated principal' });

export function fullMethodName(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * The authentication step of this transport (spec 5 rule 6: exactly one place): reads the
 * `authorization` metadata and verifies it with the same authenticate() as HTTP. Failures are thrown
 * as they are; the error interceptor outside this one maps them to Unauthenticated (spec 5 rule 8).
 */
export function authInterceptor(tokens: TokenService): Interceptor {
  return (next) => async (req) => {
    if (!AUTH_EXEMPT_METHODS.has(fullMethodName(req.method))) {
      const principal = await authenticate(req.header.get('authorization') ?? undefined, tokens);
      req.contextValues.set(principalKey, principal);
    }
    return next(req);
  };
}

/**
 * What a handler of a protected method calls. No principal means the interceptor did not run for this
 * method, so the call is refused rather than served anonymously.
 */
export function requirePrincipal(values: ContextValues): Principal {
  const principal = values.get(principalKey);
  if (principal === undefined) throw new ErrMissingCredentials();
  return principal;
}
