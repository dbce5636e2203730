export { createGateway, WS_PATH, type Gateway, type GatewayOptions, type Readiness } from './gateway.ts';
export { type VerifyToken } from './auth.ts';
export { originPolicy, type AllowedOrigins, type OriginPolicy } from './origin-policy.ts';
export { TokenBucketRateLimiter, type RateLimiter, type TokenBucketOptions } from './rate-limit.ts';
export { GatewayMetrics } from './metrics.ts';
export { isNativeUws, loadNativeUws, uwsBinaryPath, UwsUnavailableError, type UwsLoadResult } from './transport/uws-loader.ts';
export type { TransportChoiceName, TransportName } from './transport/transport.ts';
// The token contract lives in @seqline/protocol; re-exported for the apps that start a gateway.
export { createTokenVerifier, issueToken, parseTtl, type TokenClaims, type TokenVerifier } from '@seqline/protocol';
export { ADMIN_PREFIX, type AdminApiOptions } from './admin-api.ts';
export { DEV_TOKEN_PATH, isLoopbackAddress, isLoopbackHost, type DevTokenIssuer } from './dev-token.ts';
export { loadStaticSite, type StaticFile, type StaticSite } from './static-site.ts';
