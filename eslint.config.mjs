// The lint step of `npm test`: prettier keeps the layout (120 columns); these rules catch what
// the compiler does not. Model output is data, never code: no eval in any form.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-*/',
      'node_modules/',
      'runs/',
      'checkpoints/',
      'reports/',
      'scratch/',
      'src/backend/simd/binary.ts',
    ],
  },
  {
    files: ['**/*.ts', '**/*.mts', '**/*.mjs', '**/*.js'],
    languageOptions: { parser: tseslint.parser },
    rules: {
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-debugger': 'error',
      'no-dupe-keys': 'error',
      'no-self-assign': 'error',
      'no-unreachable': 'error',
      'no-constant-binary-expression': 'error',
      'no-unsafe-finally': 'error',
      'max-len': ['error', { code: 200, ignoreUrls: true }],
    },
  },
);
