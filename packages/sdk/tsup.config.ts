import { readFileSync, writeFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

// The installable SDK: one ESM file and one .d.ts in dist/, with @captionfarm/contracts (private to
// this repository) compiled in; zod stays a dependency. dist/ gets its own package.json, so the
// workspace keeps exporting the TypeScript sources (tsx, vitest and tsc read them unbuilt) and
// `npm pack dist` makes the tarball users install.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outDir: 'dist',
  clean: true,
  noExternal: ['@captionfarm/contracts'],
  // The contracts' types are inlined too, and the template types of the captions package (imported
  // with `import type`, so none of its code is bundled): `paths` points TypeScript at their sources,
  // so they are part of the program the declarations are bundled from.
  dts: {
    compilerOptions: {
      allowImportingTsExtensions: true,
      noEmit: false,
      paths: { '@captionfarm/contracts': ['../contracts/src/index.ts'], '@captionfarm/captions': ['../captions/src/index.ts'] },
    },
  },
  onSuccess: async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; description?: string; dependencies: Record<string, string> };
    const manifest = {
      name: '@captionfarm/sdk',
      version: pkg.version,
      description: 'A typed client for the Captionfarm API: upload, caption jobs, progress, download, webhook verification',
      license: 'MIT',
      type: 'module',
      engines: { node: '>=20' },
      exports: { '.': { types: './index.d.ts', default: './index.js' } },
      types: './index.d.ts',
      dependencies: { zod: pkg.dependencies.zod },
    };
    writeFileSync('dist/package.json', `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync('dist/README.md', readFileSync('README.md'));
  },
});
