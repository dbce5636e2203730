/**
 * Module resolution hooks for k6 scripts run by k6-lite: `k6` and `k6/...` imports resolve to
 * k6-lite's implementations; a k6 module it does not implement fails the import by name.
 */
import type { ResolveHook } from 'node:module';

const IMPLEMENTED: Record<string, string> = {
  k6: './k6/k6.ts',
  'k6/ws': './k6/ws.ts',
  'k6/http': './k6/http.ts',
  'k6/metrics': './k6/metrics.ts',
  'k6/crypto': './k6/crypto.ts',
  'k6/encoding': './k6/encoding.ts',
};

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  if (specifier !== 'k6' && !specifier.startsWith('k6/')) return nextResolve(specifier, context);
  const file = IMPLEMENTED[specifier];
  if (!file)
    throw new Error(
      `k6-lite does not implement "${specifier}" (it implements ${Object.keys(IMPLEMENTED).join(', ')}); run this script with k6`,
    );
  // Through the next hook (tsx), so the .ts file gets its format and is transpiled.
  return nextResolve(new URL(file, import.meta.url).href, context);
};
