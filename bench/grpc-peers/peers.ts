import type { Core } from '../../src/composition/create-app.ts';

/** A gRPC server that serves GetOrder next to the service's own, in the same child, for comparison. */
export interface GrpcPeer {
  readonly name: string;
  readonly port: number;
  readonly stop: () => Promise<void>;
}

/** The peers of the gRPC GetOrder comparison (issue 18): plain grpc-js, and Connect as-was and tuned. */
export async function startGrpcPeers(core: Pick<Core, 'orders' | 'tokens'>): Promise<GrpcPeer[]> {
  const { startGrpcJsPeer } = await import('./grpcjs-peer.ts');
  const { startConnectPeer } = await import('./connect-peer.ts');
  return [await startGrpcJsPeer(core), await startConnectPeer(core, false), await startConnectPeer(core, true)];
}
