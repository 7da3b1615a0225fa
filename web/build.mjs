// Builds the web console into one directory that the daemon's build embeds (docs/web.md):
// index.html, app.js (every module and xterm.js bundled), app.css, LICENSES.txt.
// Usage: node build.mjs --outdir DIR
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const arg = process.argv.indexOf('--outdir');
const outdir = arg > 0 ? process.argv[arg + 1] : join(here, 'dist');
mkdirSync(outdir, { recursive: true });

const result = await build({
  entryPoints: [join(here, 'src/main.js')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  outfile: join(outdir, 'app.js'),
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

copyFileSync(join(here, 'src/index.html'), join(outdir, 'index.html'));
// The page's own styles after xterm's, in one file: one request, one CSP source.
const css = [join(here, 'node_modules/@xterm/xterm/css/xterm.css'), join(here, 'src/app.css')]
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n');
writeFileSync(join(outdir, 'app.css'), css);

// Every third-party package bundled into app.js, with its licence text.
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) packages.add(m[1]);
}
packages.add('@xterm/xterm'); // its stylesheet is in app.css
let licences = 'Third-party code in the clusterws web console\n\n';
for (const name of [...packages].sort()) {
  const dir = join(here, 'node_modules', name);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  let text = '';
  for (const f of ['LICENSE', 'LICENSE.md', 'LICENSE.txt']) {
    try {
      text = readFileSync(join(dir, f), 'utf8');
      break;
    } catch {}
  }
  licences += `== ${name} ${pkg.version} (${pkg.license})\n\n${text}\n`;
}
writeFileSync(join(outdir, 'LICENSES.txt'), licences);
