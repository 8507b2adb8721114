import { ConnectError, type Interceptor } from '@connectrpc/connect';
import type { Logger } from '../../observability/logger.ts';
import { fullMethodName } from './auth-interceptor.ts';
import { toConnectError, toGrpcError } from './grpc-errors.ts';

/**
 * Outermost interceptor: every error thrown by the authentication step or a handler goes through the
 * one table (grpc-errors.ts). Unexpected ones are logged here, once, and masked as Internal; without
 * this layer Connect would send the raw message of any Error as Unknown.
 */
export function errorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      // Raised by Connect itself (deadline, cancel, undecodable message): already a status.
      if (error instanceof ConnectError) throw error;
      const mapped = toGrpcError(error);
      if (!mapped.expected) {
        logger.error({ method: fullMethodName(req.method), err: error instanceof Error ? error.message : String(error) }, 'grpc: internal error');
      }
      throw toConnectError(mapped);
    }
  };
}
