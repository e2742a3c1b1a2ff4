export {
  SafeFetchError,
  isSafeFetchError,
  toSafeFetchError,
  type SafeFetchErrorCode,
} from './errors.ts';
export {
  checkAddress,
  isPublicAddress,
  isIpLiteral,
  type AddressCheck,
  type AddressRange,
} from './ip-address.ts';
export {
  validatePublicHttpsUrl,
  validatePublicHttpsUrlSyntax,
  defaultLookup,
  type LookupAddress,
  type LookupFn,
  type UrlCheck,
  type ValidateUrlOptions,
} from './url-policy.ts';
export { addNetwork, parseAllowedNetworks, parseListenAddress } from './networks.ts';
export {
  createSafeFetch,
  safeFetch,
  type SafeFetch,
  type SafeFetchFn,
  type SafeFetchInit,
  type SafeFetchOptions,
} from './safe-fetch.ts';
