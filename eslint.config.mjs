// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readFileSync } from 'node:fs';

/** The layers of src/ (docs/architecture.md, Layers); src/context-boundaries.spec.ts reads the same table. */
const LAYERS = JSON.parse(readFileSync(new URL('./src/layers.json', import.meta.url), 'utf8'));

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** How an import names a unit from the top of src/: a folder and what follows, or a file. */
const unitPattern = (unit) =>
  unit.endsWith('.ts') ? `${escape(unit.slice(0, -3))}(?:\\.[jt]s)?$` : `${escape(unit)}/`;

/**
 * One no-restricted-imports block per unit of src/ and per folder depth, since
 * a relative import reaches the top of src/ with as many `../` as the file is
 * deep. Each refuses, fail closed, any unit that is not the unit itself, of a
 * lower layer or a declared peer; a context past its surface; and anything
 * outside src/ but libs/.
 */
function layerBlocks() {
  const blocks = [];
  for (const [index, layer] of LAYERS.layers.entries()) {
    for (const unit of layer.units) {
      const allowed = [
        unit,
        ...LAYERS.layers.slice(0, index).flatMap((lower) => lower.units),
        ...(LAYERS.peers[unit] ?? []),
      ];
      const contexts = allowed.filter((other) => other !== unit && LAYERS.contexts.includes(other));
      const depths = unit.endsWith('.ts') ? [0] : Array.from({ length: LAYERS.deepestFolder }, (_, depth) => depth + 1);
      for (const depth of depths) {
        const top = depth === 0 ? String.raw`\./` : `(?:\\.\\./){${depth}}`;
        const patterns = [
          {
            regex: `^${top}(?!\\.\\./|${allowed.map(unitPattern).join('|')})`,
            message: `src/${unit} imports only its own files, lower layers and its declared peers (src/layers.json).`,
          },
          {
            regex: `^${depth === 0 ? '' : top}\\.\\./(?!libs/)`,
            message: 'Outside src/, only libs/ is imported.',
          },
          ...contexts.map((context) => ({
            regex: `^${top}${escape(context)}/(?!(?:${[...LAYERS.surface, ...(LAYERS.moreSurface[context] ?? [])].join('|')})$)`,
            message: `${context} is reached through its module, services, domain events, DTOs, SQL fragments or OpenAPI fragment.`,
          })),
        ];
        blocks.push({
          files: [unit.endsWith('.ts') ? `src/${unit}` : `src/${unit}/${'*/'.repeat(depth - 1)}*.ts`],
          ignores: ['**/*.spec.ts'],
          rules: { 'no-restricted-imports': ['error', { patterns }] },
        });
      }
    }
  }
  return blocks;
}

export default tseslint.config(
  // test/client/public-api.d.ts is generated (npm run openapi:types); the typed-client spec keeps it current.
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'eslint.config.mjs', 'test/client/public-api.d.ts'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/src/**'], message: 'libs/ never imports from src/' }] },
      ],
    },
  },
  {
    // The browser scripts, the portal's and those every page shares (the dashboard has none of its own): plain
    // JavaScript, no type information.
    files: ['src/portal/assets/**/*.js', 'src/common/html/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: false },
      sourceType: 'script',
      globals: {
        document: 'readonly',
        navigator: 'readonly',
        Element: 'readonly',
        window: 'readonly',
        fetch: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
  },
  {
    // Node scripts that run before the compile (npm test's): plain JavaScript, outside the TypeScript program.
    files: ['tools/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: false },
      globals: { process: 'readonly' },
    },
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'ormconfig.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  ...layerBlocks(),
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Response bodies are parsed JSON (`any` by nature); assertions check their shape.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
