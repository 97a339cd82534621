import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lintDockerfile } from './dockerfile';
import { ROOT } from './env-scan';

const DOCKERFILE = readFileSync(join(ROOT, 'k8s/image/Dockerfile'), 'utf8');

describe('k8s/image/Dockerfile', () => {
  test('pinned base, non-root, production dependencies only, ffmpeg', () => {
    expect(lintDockerfile(DOCKERFILE)).toEqual([]);
  });

  test('the lint catches what it is for', () => {
    const base = 'FROM node:20@sha256:' + 'a'.repeat(64) + ' AS build\nRUN npm ci && npm run build && npm prune --omit=dev\n';
    const good =
      base +
      'FROM node:20@sha256:' +
      'a'.repeat(64) +
      '\nRUN apt-get install -y ffmpeg\nCOPY --from=build /src/node_modules ./node_modules\nUSER 1000\n';
    expect(lintDockerfile(good)).toEqual([]);
    expect(lintDockerfile(good.replace(/@sha256:a+\n/, '\n'))).toEqual(['base image node:20 is not pinned by digest']);
    expect(lintDockerfile(good.replace('USER 1000', 'USER 0'))).toEqual(['the final stage runs as root']);
    expect(lintDockerfile(good.replace('USER 1000\n', ''))).toEqual(['the final stage sets no USER (it would run as root)']);
    expect(lintDockerfile(good.replace(' && npm prune --omit=dev', ''))).toEqual(['stage build keeps its development dependencies']);
    expect(lintDockerfile(good + 'RUN npm install left-pad\n')).toEqual(['the final stage installs development dependencies']);
    expect(lintDockerfile(good.replace('-y ffmpeg', '-y curl'))).toEqual(['the final stage does not install ffmpeg']);
  });

  test('.dockerignore keeps dependencies, build output and history out of the context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', 'dist', '.git', 'data', '.env']));
    // What the build copies stays in the context.
    for (const path of ['package.json', 'package-lock.json', '.npmrc', 'apps', 'libs', 'tools/scripts', '.swcrc'])
      expect(ignored).not.toContain(path);
  });
});
