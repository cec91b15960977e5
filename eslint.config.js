import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'coverage/', 'dist/', '.porter/', 'bench/out/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // the web console: plain ES modules run by the browser as they are
    files: ['src/console/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'AbortController',
          'Blob',
          'Event',
          'FormData',
          'Node',
          'URL',
          'URLSearchParams',
          'clearTimeout',
          'document',
          'fetch',
          'location',
          'sessionStorage',
          'setTimeout',
          'window',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
);
