import { unknownFields } from './strict-fields';

test('an unknown field is named, at any depth; a valid object passes', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'web:1', resources: { limits: { memory: '1Gi' } } }] },
      },
    },
  };
  const typo = JSON.parse(JSON.stringify(deployment));
  typo.spec.template.spec.containers[0].readinesProbe = { httpGet: { path: '/health', port: 8080 } };
  const problems = unknownFields([deployment, typo]);
  expect(problems).toHaveLength(1);
  expect(problems[0]).toMatch(/^Deployment\/web: .*'"?readinesProbe"?'/);
}, 60_000);
