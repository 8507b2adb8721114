/**
 * The public GET routes that are no business operation (spec 4.1): the contract, the docs page and its
 * offline assets, registered unauthenticated by every HTTP transport. Each asset is its own literal path:
 * any other name under /swagger/assets/ is the router's ordinary 404.
 */
import { OPENAPI_YAML } from '../../../gen/openapi-document.ts';
import { OPENAPI_PATH, SWAGGER_PATH } from '../rest/routes.ts';
import { SWAGGER_ASSETS, swaggerAssetReply } from './swagger-assets.ts';
import { SWAGGER_ASSETS_URL, SWAGGER_PAGE_REPLY } from './swagger-page.ts';
import type { StaticReply } from './static-reply.ts';

interface ContractRoute {
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
