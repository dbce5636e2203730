// Type-aware lint: the rules that catch what tsc does not (promises nobody awaits, `any`
// leaking through a boundary). Formatting is prettier's job, checked by `npm run lint` too.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.tools/**',
      '.services/**',
      'data/**',
      'coverage/**',
      'artifacts/**',
      '**/*.js',
      '**/*.cjs',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // lmdb-js put/remove inside a write transaction (the embedded store's WriteBatcher) apply
      // synchronously; their promise only says the batch committed, which the batcher awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [{ from: 'package', package: 'lmdb', name: ['put', 'remove'] }],
        },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Adapters implement promise-returning ports with synchronous bodies: `async` there is the contract.
      '@typescript-eslint/require-await': 'off',
      // A closure may read a variable the test assigns later on.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A catch block passes on what it caught, whatever it is.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Numbers, booleans, arrays and narrowed-away values read fine in error messages.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowNullish: true, allowArray: true, allowNever: true },
      ],
    },
  },
  {
    // Tests are not boundaries: vitest's asymmetric matchers are typed `any`, frames are parsed
    // ad hoc, and `expect(obj.method)` reads methods unbound on purpose.
    files: ['**/test/**/*.ts', 'libs/testing/src/**/*.ts', 'loadtest/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      // Fault tests declare their timestamps up front so `finally` can report them.
      'no-useless-assignment': 'off',
    },
  },
);
