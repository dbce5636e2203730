#!/usr/bin/env node
// The built CLI (`npm run build` writes apps/admin/dist); from the sources: `npm run admin -- …`.
await import('../dist/main.js');
