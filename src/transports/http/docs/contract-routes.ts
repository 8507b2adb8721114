import { OPENAPI_YAML } from '../../../gen/openapi-document.ts';
import { OPENAPI_PATH, SWAGGER_PATH } from '../rest/routes.ts';
import { SWAGGER_ASSETS, swaggerAssetReply } from './swagger-assets.ts';
import { SWAGGER_ASSETS_URL, SWAGGER_PAGE_REPLY } from './swagger-page.ts';
import type { StaticReply } from './static-reply.ts';

/**
 * The public GET routes that are not business operations (spec 4.1 table): the contract, the docs page
 * and the page's offline assets. Every HTTP transport registers exactly these, unauthenticated, and
 * writes the reply as it is. Each asset is its own literal path, so the allow-list is the route table:
 * any other name under /swagger/assets/ matches no route and is the router's ordinary 404.
 */
export interface ContractRoute {
  readonly path: string;
  reply(ifNoneMatch: string | undefined): StaticReply;
}

const OPENAPI_REPLY: StaticReply = { status: 200, headers: { 'content-type': 'application/yaml' }, body: OPENAPI_YAML };

export const CONTRACT_ROUTES: readonly ContractRoute[] = [
  { path: OPENAPI_PATH, reply: () => OPENAPI_REPLY },
  { path: SWAGGER_PATH, reply: () => SWAGGER_PAGE_REPLY },
  ...SWAGGER_ASSETS.map((asset) => ({
    path: `${SWAGGER_PATH}${SWAGGER_ASSETS_URL}${asset.name}`,
    reply: (ifNoneMatch: string | undefined) => swaggerAssetReply(asset, ifNoneMatch),
  })),
];
