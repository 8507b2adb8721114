import type { Core } from '../../src/composition/create-app.ts';
import type { GrpcPeer } from './grpc-peer.ts';

/** The peers of the gRPC GetOrder comparison (issue 18): plain grpc-js, and Connect as-was and tuned. */
export async function startGrpcPeers(core: Pick<Core, 'orders' | 'tokens'>): Promise<GrpcPeer[]> {
  const { startGrpcJsPeer } = await import('./grpcjs-peer.ts');
  const { startConnectPeer } = await import('./connect-peer.ts');
  return [await startGrpcJsPeer(core), await startConnectPeer(core, false), await startConnectPeer(core, true)];
}
