/** A whole answer needing neither a request body nor the service: the contract documents and the docs page. */
export interface StaticReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}
