/**
 * Architecture boundaries (docs/architecture.md, "Two deployments, one code path"): apps → libs; adapters → core; core → nothing of ours;
 * every lib is imported through its one public entry; no cycles.
 */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'core-depends-on-nothing-of-ours',
      severity: 'error',
      from: { path: '^libs/core/' },
      to: { path: '^(libs/(?!core/)|apps/)' },
    },
    {
      name: 'libs-never-import-apps',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-deep-imports-across-packages',
      comment: 'import another package by its name (an entry of its exports), never a file inside it',
      severity: 'error',
      from: { path: '^(libs|apps)/([^/]+)/' },
      to: {
        path: '^(libs|apps)/([^/]+)/',
        // The subpath entries: @seqline/store/scylla (CQL, kept out of the embedded server), @seqline/bus/local, @seqline/bus/threads, @seqline/runtime/process, @seqline/runtime/hook-defaults and @seqline/runtime/bounds.
        pathNot: [
          '^(libs|apps)/$2/',
          '^(libs|apps)/[^/]+/src/index\\.ts$',
          '^libs/store/src/scylla/index\\.ts$',
          '^libs/bus/src/local\\.ts$',
          '^libs/bus/src/threads\\.ts$',
          '^libs/runtime/src/process\\.ts$',
          '^libs/runtime/src/hook-defaults\\.ts$',
          '^libs/runtime/src/bounds\\.ts$',
        ],
      },
    },
    {
      name: 'apps-do-not-import-each-other',
      severity: 'error',
      from: { path: '^apps/([^/]+)/src/' },
      to: { path: '^apps/', pathNot: ['^apps/$1/', '^apps/gateway/src/index\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(node_modules|/dist/|/test/|\\.test\\.ts$)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['source', 'import', 'require', 'node', 'default'] },
  },
};
