/** A gRPC server that serves GetOrder next to the service's own, in the same child, for comparison. */
export interface GrpcPeer {
  readonly name: string;
  readonly port: number;
  readonly stop: () => Promise<void>;
}
